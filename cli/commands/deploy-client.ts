/**
 * The deploy commands' client: follow a deployment's steps live.
 */
import { apiGet, type ApiClientOptions } from '../api-client.js';

/** One step of a deployment as the API shows it. */
export interface StepView {
  seq: number;
  step: string;
  status: string;
  message: string | null;
  output: string | null;
  startedAt: string;
  endedAt: string | null;
}

/** A deployment with its steps. */
export interface StepsView {
  deployment: {
    id: string;
    sagaId: string;
    app: string;
    kind: string;
    status: string;
    commit: string | null;
    failedStep: string | null;
    message: string | null;
  };
  steps: StepView[];
}

const TERMINAL = new Set(['succeeded', 'failed', 'rolled_back', 'cancelled']);

function seconds(step: StepView): string {
  if (!step.endedAt) return '';
  return `${((Date.parse(step.endedAt) - Date.parse(step.startedAt)) / 1000).toFixed(1)}s`;
}

/**
 * Prints each step as it starts and ends until the deployment is terminal; returns the final
 * deployment. Polls every `intervalMs`.
 */
export async function followDeployment(
  id: string,
  options: ApiClientOptions & { intervalMs?: number; write?: (text: string) => void } = {},
): Promise<StepsView> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const printed = new Map<number, string>();
  for (;;) {
    const view = await apiGet<StepsView>(`/api/v1/deployments/${encodeURIComponent(id)}/steps`, options);
    for (const step of view.steps) {
      if (printed.get(step.seq) === step.status) continue;
      if (step.status === 'running') write(`  ${step.step.padEnd(9)} running\n`);
      else
        write(
          `  ${step.step.padEnd(9)} ${step.status.padEnd(9)} ${seconds(step).padStart(6)}  ${step.message ?? ''}\n`,
        );
      if (step.status === 'failed' && step.output)
        write(
          step.output
            .split('\n')
            .map((line) => `      | ${line}`)
            .join('\n') + '\n',
        );
      printed.set(step.seq, step.status);
    }
    if (TERMINAL.has(view.deployment.status)) return view;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}
