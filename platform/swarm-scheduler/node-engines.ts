/**
 * The Engine API of each swarm node. Swarm's manager API reaches services and tasks on every node, but
 * a container (its exec, its stats) only through the engine of the node that runs it. The manager's
 * engine is the platform's own; another node's is the address its `svc.engine` label gives
 * (`docker node update --label-add svc.engine=tcp://<host>:2376 <node>`, TLS as for the manager).
 */
import type Docker from 'dockerode';
import { ConflictError } from '../../domain/errors.js';
import { engineAt } from './engine.js';

/** The node label that gives a node's Engine API address. */
export const NODE_ENGINE_LABEL = 'svc.engine';
/** How long a node without a usable label is not asked again. */
const RETRY_MS = 5_000;

/** Finds, and keeps, the engine of each node. */
export class NodeEngines {
  readonly #manager: Docker;
  #managerNode: Promise<string | undefined> | undefined;
  readonly #known = new Map<string, Docker>();
  readonly #refused = new Map<string, { at: number; error: Error }>();

  constructor(manager: Docker) {
    this.#manager = manager;
  }

  /** The manager's own node id. */
  managerNode(): Promise<string | undefined> {
    this.#managerNode ??= this.#manager
      .info()
      .then((info: { Swarm?: { NodeID?: string } }) => info.Swarm?.NodeID)
      .catch(() => undefined);
    return this.#managerNode;
  }

  /** True when `node` is the manager's own (or unknown: a container found on this host). */
  async onManager(node: string | undefined): Promise<boolean> {
    return node === undefined || node === (await this.managerNode());
  }

  /** The engine that runs `node`'s containers; refused, with what to do, when the node has no address. */
  async engineOf(node: string | undefined): Promise<Docker> {
    if (await this.onManager(node)) return this.#manager;
    const id = node!;
    const known = this.#known.get(id);
    if (known) return known;
    const refused = this.#refused.get(id);
    if (refused && Date.now() - refused.at < RETRY_MS) throw refused.error;
    const info = (await this.#manager.getNode(id).inspect()) as {
      Spec?: { Labels?: Record<string, string> };
      Description?: { Hostname?: string };
    };
    const address = info.Spec?.Labels?.[NODE_ENGINE_LABEL];
    const name = info.Description?.Hostname ?? id;
    if (address === undefined || !/^(unix|tcp):\/\/./.test(address)) {
      const error = new ConflictError(
        `the task runs on node ${name}, whose Engine API the platform does not know: label the node with its address (docker node update --label-add ${NODE_ENGINE_LABEL}=tcp://<host>:2376 ${name})`,
        { code: 'node_engine_unknown', details: { node: name } },
      );
      this.#refused.set(id, { at: Date.now(), error });
      throw error;
    }
    const engine = engineAt(address);
    this.#known.set(id, engine);
    this.#refused.delete(id);
    return engine;
  }
}
