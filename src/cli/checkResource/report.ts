// The report of check-resource: a table of what held, or one JSON document.
import type { CheckReport } from '../../fencing/check/plan';
import { table, toJson } from '../output';

export function reportText(r: CheckReport): string {
  const failed = r.rows.filter((row) => !row.held);
  const head = `check-resource: ${r.target.kind} ${r.target.resource}, lock ${JSON.stringify(r.lock)}\n\n`;
  const rows = r.rows.map((row) => [row.check, row.claim ? `${row.claim.token}/${row.claim.step}` : '-', row.expected, row.observed, row.held ? 'yes' : 'NO']);
  const verdict =
    failed.length === 0
      ? `\nall ${r.rows.length} checks held\n`
      : `\n${failed.length} of ${r.rows.length} checks did NOT hold: ${failed.map((f) => f.check).join(', ')}\n${failed.map((f) => `  ${f.check}: ${f.rule}`).join('\n')}\n`;
  return head + table(['CHECK', 'TOKEN/STEP', 'EXPECTED', 'OBSERVED', 'HELD'], rows) + verdict;
}

export function reportJson(r: CheckReport): string {
  return `${toJson({ target: r.target, lock: r.lock, held: r.held, checks: r.rows })}\n`;
}
