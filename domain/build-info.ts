/** Identity of the running build; platform/build-info.ts reads it from the package and git. */
export interface BuildInfo {
  readonly name: string;
  readonly version: string;
  /** Display label `v<major>.<minor>.<patch>-platform[-<distance>-g<shortsha>]`; never an identity. */
  readonly label: string;
  readonly commit: string | null;
  readonly node: string;
  /** The platform release folder it runs from (`releases/<id>/`, its `release.json`), or null for a checkout. */
  readonly release?: string | null;
}
