/**
 * Waiting for a durable operation from a client command: polls `GET /api/v1/operations/{id}`
 * until the operation is terminal; a failed or cancelled one is a failure of the command (exit 1).
 */
import { apiGet, type ApiClientOptions } from './api-client.js';
import { CliError, ExitCode } from './cli-error.js';

/** The fields of an operation a command prints. */
export interface OperationView {
  id: string;
  kind: string;
  status: string;
  lastError: string | null;
  result?: Record<string, unknown> | null;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Waits until the operation is terminal and returns it when it succeeded. */
export async function waitForOperation(id: string, opts: ApiClientOptions, intervalMs = 200): Promise<OperationView> {
  for (;;) {
    const op = await apiGet<OperationView>(`/api/v1/operations/${encodeURIComponent(id)}`, opts);
    if (TERMINAL.has(op.status)) {
      if (op.status !== 'succeeded')
        throw new CliError(
          `operation ${op.id} (${op.kind}) ${op.status}: ${op.lastError ?? 'no reason given'}`,
          ExitCode.failed,
          { operation: op.id },
        );
      return op;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
