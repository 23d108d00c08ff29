/** One JSON line per event on stderr (CloudWatch Logs on Lambda parses JSON lines). */
export function structuredLog(msg: string, fields: Record<string, unknown> = {}): void {
  if (process.env.SHOAL_QUIET === "true") return;
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...fields })}\n`);
}
