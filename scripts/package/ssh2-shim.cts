/**
 * Stand-in for `ssh2` inside the release bundle. docker-modem (the swarm driver's engine client)
 * loads it for `ssh://` engine addresses, which the platform does not take (`SVC_SWARM_HOST` is
 * `unix://` or `tcp://`); the real package would bring native addons the bundle cannot hold.
 */
class Client {
  constructor() {
    throw new Error('ssh:// engine addresses are not supported: set SVC_SWARM_HOST to unix:// or tcp://');
  }
}

export = { Client };
