/**
 * IANA time zones of schedules (`processes.<name>.timezone`), checked by loading them the way the
 * schedulers do (croner and the kubernetes CronJob `timeZone` both take IANA names).
 */

/** True when `zone` is an IANA time zone this runtime knows. */
export function isKnownTimeZone(zone: string): boolean {
  return canonicalTimeZone(zone) !== undefined;
}

/**
 * The runtime's canonical spelling of `zone` (`europe/paris` → `Europe/Paris`, `utc` → `UTC`);
 * undefined for an unknown zone.
 */
export function canonicalTimeZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}
