/**
 * How `tail` shows an event received from the bus: one pretty line on a terminal, the event
 * itself as one NDJSON line otherwise. Pure.
 */
import type { Terminal } from './terminal.ts';
import { paint } from './terminal.ts';

export interface ReceivedBusEvent {
  readonly id?: string;
  readonly time?: string;
  readonly source?: string;
  readonly 'detail-type'?: string;
  readonly detail?: unknown;
}

export function renderBusEvent(event: ReceivedBusEvent, terminal: Terminal, json = false): string {
  if (json || !terminal.stdoutIsTerminal) return `${JSON.stringify(event)}\n`;
  const colors = paint(terminal);
  const detail = (typeof event.detail === 'object' && event.detail !== null ? event.detail : {}) as Record<
    string,
    unknown
  >;
  const sequence = detail.sequence_number === undefined ? '' : ` #${String(detail.sequence_number)}`;
  const data = JSON.stringify(detail.data ?? detail);
  const shown = data.length > 160 ? `${data.slice(0, 157)}...` : data;
  return `${colors.dim(event.time ?? '')} ${colors.cyan(event['detail-type'] ?? '?')}${colors.bold(sequence)} ${colors.dim(String(detail.id ?? event.id ?? ''))}\n  ${shown}\n`;
}
