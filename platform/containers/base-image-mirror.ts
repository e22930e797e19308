/**
 * Serves the host's offline base images (`scripts/base-images.sh`, ADR 0222) through the managed
 * registry's docker.io mirror: each local image labelled `io.svc.base-image=<docker.io reference>` is
 * pushed to `<registry>/mirror/<repository>:<tag>` unless the registry already holds that very image
 * there (a rebuilt base image replaces an older one).
 */
import { MIRROR_NAMESPACE } from './containers-config.js';
import type { Podman } from './podman.js';

/** Label the base-image script puts on each image: its docker.io reference. */
export const BASE_IMAGE_LABEL = 'io.svc.base-image';

/** What the mirror did with one base image. */
export interface MirroredImage {
  readonly reference: string;
  readonly mirrored: string;
  readonly outcome: 'present' | 'pushed' | 'failed';
  readonly error?: string;
}

/** `docker.io/library/node:20` → `library/node` and `20`. */
export function dockerHubPath(reference: string): { repository: string; tag: string } | undefined {
  const match =
    /^(?:docker\.io\/)?([a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*):([\w][\w.-]{0,127})$/.exec(
      reference,
    );
  if (!match) return undefined;
  const repository = match[1]!.includes('/') ? match[1]! : `library/${match[1]!}`;
  return { repository, tag: match[2]! };
}

/** Pushes every labelled local base image missing from the registry's mirror namespace. */
export async function mirrorBaseImages(podman: Podman, registryHost: string): Promise<MirroredImage[]> {
  const listed = await podman.run(['images', '--filter', `label=${BASE_IMAGE_LABEL}`, '--format', 'json']);
  if (!listed.ok) return [];
  const images = JSON.parse(listed.stdout || '[]') as {
    Id?: string;
    Names?: string[] | null;
    Labels?: Record<string, string> | null;
  }[];
  const byReference = new Map<string, string>();
  for (const image of images) {
    const reference = image.Labels?.[BASE_IMAGE_LABEL];
    // Only the image that holds the name now: an older build of it stays labelled but untagged.
    if (reference && image.Id && (image.Names ?? []).includes(reference))
      byReference.set(reference, image.Id.replace(/^sha256:/, ''));
  }
  const out: MirroredImage[] = [];
  for (const [reference, id] of byReference) {
    const at = dockerHubPath(reference);
    if (!at) continue;
    const mirrored = `${registryHost}/${MIRROR_NAMESPACE}/${at.repository}:${at.tag}`;
    // The mirror holds this very image when its manifest names the local image's config (its id).
    const held = await fetch(`http://${registryHost}/v2/${MIRROR_NAMESPACE}/${at.repository}/manifests/${at.tag}`, {
      headers: {
        accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
      },
    })
      .then(async (response) =>
        response.ok ? ((await response.json()) as { config?: { digest?: string } }) : undefined,
      )
      .catch(() => undefined);
    if (held?.config?.digest === `sha256:${id}`) {
      out.push({ reference, mirrored, outcome: 'present' });
      continue;
    }
    const pushed = await podman.run(['push', reference, mirrored], { timeoutMs: 10 * 60_000 });
    out.push(
      pushed.ok
        ? { reference, mirrored, outcome: 'pushed' }
        : { reference, mirrored, outcome: 'failed', error: pushed.stderr.trim().slice(-400) },
    );
  }
  return out;
}
