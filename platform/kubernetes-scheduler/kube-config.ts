/**
 * Kubeconfig loading: which cluster and context a kubernetes target talks to.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { ValidationError } from '../../domain/errors.js';

/** Where the kubeconfig comes from. */
export interface KubeConfigSource {
  /** Kubeconfig file; absent: in-cluster service account, else `$KUBECONFIG` or `~/.kube/config` (client-node `loadFromDefault`). */
  readonly kubeconfigPath?: string;
}

/**
 * The kubeconfig of a region: its current context is the context named like the region when the
 * kubeconfig has one, else the kubeconfig's current context.
 */
export function kubeConfigForRegion(source: KubeConfigSource, region: string): KubeConfig {
  const config = new KubeConfig();
  try {
    if (source.kubeconfigPath !== undefined) config.loadFromFile(source.kubeconfigPath);
    else config.loadFromDefault();
  } catch (error) {
    throw new ValidationError(
      `kubernetes: cannot load kubeconfig ${source.kubeconfigPath ?? '(default)'}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (config.getContexts().some((c) => c.name === region)) config.setCurrentContext(region);
  if (!config.getCurrentCluster())
    throw new ValidationError(
      `kubernetes: kubeconfig ${source.kubeconfigPath ?? '(default)'} has no current cluster for region ${region}`,
    );
  return config;
}
