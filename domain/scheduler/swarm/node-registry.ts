/**
 * The registry swarm nodes pull from. The managed registry listens on the manager's loopback
 * (`127.0.0.1:<port>`), which names another node's own loopback there. With `SVC_SWARM_REGISTRY` set to
 * an address every node reaches (a TLS proxy in front of the managed registry, say), a service names its
 * image there instead: same repository, same digest.
 */

const LOOPBACK_REGISTRY = /^(?:127(?:\.\d{1,3}){3}|localhost)(?::\d+)?\/(.+)$/;

/** `image` as the nodes pull it: a loopback registry replaced by `nodeRegistry`, anything else as is. */
export function imageForNodes(image: string, nodeRegistry: string | undefined): string {
  if (nodeRegistry === undefined) return image;
  const match = LOOPBACK_REGISTRY.exec(image);
  return match ? `${nodeRegistry}/${match[1]}` : image;
}
