/**
 * `account_status` → `AccountStatus`: readable construct ids and output names derived from event
 * types and program names. Anything but letters and digits separates words.
 */
export function pascalCase(value: string): string {
  return value
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
}
