/**
 * IAM's evaluation of identity-policy `Allow` statements, as far as the operator grants use it:
 * actions matched case-insensitively with `*` and `?`, each resource of a request matched
 * against the statement's ARNs (case-sensitively, with `*` and `?`), and the condition operators
 * `ArnLike`/`StringLike`/`StringEquals` on the keys a request carries. A synthesized statement's
 * intrinsics (`Ref`, `Fn::GetAtt`, `Fn::Join`) are resolved first against what was deployed.
 */

export interface PolicyStatement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | readonly string[];
  readonly Resource: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, string | readonly string[]>>>>;
}

/** What IAM is asked: an action, the resources it touches, and the condition keys it carries. */
export interface AuthorizationRequest {
  /** `service:Action`. */
  readonly action: string;
  /** Every resource IAM checks for the call; `*` for actions without a resource type. */
  readonly resources: readonly string[];
  readonly conditionKeys?: Readonly<Record<string, readonly string[]>>;
}

/**
 * Values for a template's intrinsics: a resolved intrinsic (`stack.resolve(table.tableArn)`, as
 * JSON) → what it is in the deployment, and the pseudo parameters (`AWS::Region`, …).
 */
export type IntrinsicBindings = ReadonlyMap<string, string>;

const list = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

/** The template's value with every intrinsic replaced by its binding; an unbound one throws. */
export function resolveIntrinsics(value: unknown, bindings: IntrinsicBindings): unknown {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map((item) => resolveIntrinsics(item, bindings));
  if (value === null || typeof value !== 'object') return value;
  const bound = bindings.get(JSON.stringify(value));
  if (bound !== undefined) return bound;
  const record = value as Record<string, unknown>;
  if ('Ref' in record) {
    const pseudo = bindings.get(String(record.Ref));
    if (pseudo === undefined) throw new Error(`Nothing deployed is bound to ${JSON.stringify(value)}`);
    return pseudo;
  }
  if ('Fn::Join' in record) {
    const [separator, parts] = record['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => String(resolveIntrinsics(part, bindings))).join(separator);
  }
  if (Object.keys(record).some((key) => key.startsWith('Fn::'))) {
    throw new Error(`Nothing deployed is bound to ${JSON.stringify(value)}`);
  }
  return Object.fromEntries(
    Object.entries(record).map(([key, item]) => [key, resolveIntrinsics(item, bindings)]),
  );
}

/** `*` any run of characters, `?` one character; everything else literal. */
function wildcardMatches(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

function conditionHolds(
  condition: PolicyStatement['Condition'],
  keys: Readonly<Record<string, readonly string[]>>,
): boolean {
  if (condition === undefined) return true;
  return Object.entries(condition).every(([operator, tests]) =>
    Object.entries(tests).every(([key, expected]) => {
      const values = keys[key];
      // IAM: a key the request does not carry fails every operator without IfExists.
      if (values === undefined || values.length === 0) return false;
      const patterns = list(expected);
      const matches = (value: string): boolean => {
        switch (operator) {
          case 'ArnLike':
          case 'StringLike':
            return patterns.some((pattern) => wildcardMatches(pattern, value, false));
          case 'StringEquals':
            return patterns.includes(value);
          default:
            throw new Error(`Condition operator ${operator} is not evaluated here`);
        }
      };
      return values.every(matches);
    }),
  );
}

/** Whether one `Allow` statement (and no `Deny`: the grants have none) lets the request through. */
export function isAllowed(statements: readonly PolicyStatement[], request: AuthorizationRequest): boolean {
  if (statements.some((statement) => statement.Effect !== 'Allow')) {
    throw new Error('Deny statements are not evaluated here');
  }
  if (request.resources.length === 0) throw new Error(`${request.action}: no resource to authorize`);
  return request.resources.every((resource) =>
    statements.some(
      (statement) =>
        list(statement.Action).some((action) => wildcardMatches(action, request.action, true)) &&
        list(statement.Resource).some((pattern) => wildcardMatches(pattern, resource, false)) &&
        conditionHolds(statement.Condition, request.conditionKeys ?? {}),
    ),
  );
}

/** Every action the statements name (each a literal here: the grants use no action wildcards). */
export function actionsOf(statements: readonly PolicyStatement[]): string[] {
  return [...new Set(statements.flatMap((statement) => list(statement.Action)))].sort();
}
