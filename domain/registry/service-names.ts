/**
 * Registry service names: how an app's processes are named in the registry.
 */

/** The registry service of a process: `<app>-<process>`. */
export function processServiceName(app: string, process: string): string {
  return `${app}-${process}`;
}

/** The metrics companion of a process: `<app>-<process>-metrics`. */
export function metricsServiceName(app: string, process: string): string {
  return `${app}-${process}-metrics`;
}
