/**
 * Static checks that the core knows nothing of AWS by meaning (`test/unit/architecture/
 * core-meaning.test.ts`): over a parsed source, where its code (comments aside) names an AWS
 * error, matches AWS error names with a pattern, or holds one of the bus's byte limits. The
 * names and numbers come from the AWS adapters, which are the ones allowed to know them.
 */
import ts from 'typescript';
import { CLASSIC_REFUSED_ENTRY_CODES } from '../../functions/adapters/aws/eventbridge-publisher.ts';
import { THROTTLE_NAMES, TRANSIENT_NAMES } from '../../functions/adapters/aws/put-events-failure.ts';
import {
  DEFAULT_MAX_ENTRY_BYTES,
  PUT_EVENTS_MAX_BYTES,
} from '../../functions/adapters/aws/put-events-limits.ts';

/** Every error name the AWS adapters decide by; any `…Exception` is caught by its form. */
const AWS_ERROR_NAMES: ReadonlySet<string> = new Set([
  ...THROTTLE_NAMES,
  ...TRANSIENT_NAMES,
  ...CLASSIC_REFUSED_ENTRY_CODES,
]);
const EXCEPTION_NAME = /^[A-Z][A-Za-z0-9]*Exception$/;
/** Where the AWS adapters keep the service's own name of an error, for people. */
const ADAPTER_ONLY_NAMES: ReadonlySet<string> = new Set(['awsError']);
/** What a pattern deciding by AWS error names would match. */
const AWS_PROBES = [...AWS_ERROR_NAMES, 'ValidationException', 'InvalidInputException'];
/**
 * Words of no meaning to AWS: a pattern that matches one of them too is a generic rule (a name's
 * form, a number), not a test for an AWS error.
 */
const NEUTRAL_PROBES = ['retail', 'account_status', 'Card', 'x', 'OrdinaryWord', 'a1'];

/**
 * The bus's byte limits: PutEvents' cap and our default below it (`put-events-limits.ts`), and the
 * cap before 2026 (256 KiB, or 256 KB read as thousands).
 */
const BUS_BYTE_LIMITS: ReadonlySet<number> = new Set([
  PUT_EVENTS_MAX_BYTES,
  DEFAULT_MAX_ENTRY_BYTES,
  262_144,
  256_000,
]);

export function parseSource(name: string, text: string): ts.SourceFile {
  return ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
}

function where(source: ts.SourceFile, node: ts.Node): string {
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  return `${source.fileName}:${line}`;
}

/** The words of a text: what an identifier, a string or a template is made of. */
function words(text: string): string[] {
  return text.split(/[^A-Za-z0-9_]+/).filter((word) => word !== '');
}

function isAwsName(word: string): boolean {
  return EXCEPTION_NAME.test(word) || AWS_ERROR_NAMES.has(word) || ADAPTER_ONLY_NAMES.has(word);
}

/** A node whose text the code names things with: an identifier, a string or a template's text. */
function isNamingText(node: ts.Node): node is ts.Node & { readonly text: string } {
  return (
    ts.isIdentifier(node) ||
    ts.isPrivateIdentifier(node) ||
    ts.isStringLiteral(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) ||
    ts.isTemplateHead(node) ||
    ts.isTemplateMiddle(node) ||
    ts.isTemplateTail(node)
  );
}

function patternOf(literal: string): RegExp {
  const end = literal.lastIndexOf('/');
  return new RegExp(literal.slice(1, end), literal.slice(end + 1).replace(/[gy]/g, ''));
}

/** Where the code (its comments aside) names an AWS error, or matches AWS error names with a pattern. */
export function awsErrorNames(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) {
      const pattern = patternOf(node.text);
      const matched = AWS_PROBES.filter((name) => pattern.test(name));
      if (matched.length > 0 && !NEUTRAL_PROBES.some((word) => pattern.test(word))) {
        found.push(`${where(source, node)} matches ${matched[0]} with ${node.text}`);
      }
    } else if (isNamingText(node)) {
      for (const word of words(node.text)) {
        if (isAwsName(word)) found.push(`${where(source, node)} names ${word}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The value of a numeric expression made of literals only (`1_048_576`, `256 * 1024`, `2 ** 20`). */
function constantValue(node: ts.Node): number | undefined {
  if (ts.isNumericLiteral(node)) return Number(node.text.replaceAll('_', ''));
  if (ts.isParenthesizedExpression(node)) return constantValue(node.expression);
  if (!ts.isBinaryExpression(node)) return undefined;
  const left = constantValue(node.left);
  const right = constantValue(node.right);
  if (left === undefined || right === undefined) return undefined;
  switch (node.operatorToken.kind) {
    case ts.SyntaxKind.AsteriskToken:
      return left * right;
    case ts.SyntaxKind.AsteriskAsteriskToken:
      return left ** right;
    case ts.SyntaxKind.PlusToken:
      return left + right;
    default:
      return undefined;
  }
}

/** Where the code holds one of the bus's byte limits, as a literal or an expression of literals. */
export function busByteLimits(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const value = constantValue(node);
    if (value === undefined) {
      ts.forEachChild(node, visit);
    } else if (BUS_BYTE_LIMITS.has(value)) {
      found.push(`${where(source, node)} holds ${value} (${node.getText(source)})`);
    }
  };
  visit(source);
  return found;
}

/**
 * AWS services the adapters speak to, as the core's code would name them: a message or a name
 * holding one is the adapter's to word (`BusEntryRules.busName` carries the bus's name in).
 */
const AWS_SERVICE_NAMES = ['EventBridge', 'PutEvents', 'DynamoDB', 'SecretsManager', 'Secrets Manager'];

/** Where the code (its comments aside) names an AWS service, in an identifier, a string or a template. */
export function awsServiceNames(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (isNamingText(node)) {
      const name = AWS_SERVICE_NAMES.find((service) =>
        node.text.toLowerCase().includes(service.toLowerCase()),
      );
      if (name !== undefined) found.push(`${where(source, node)} names ${name}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
