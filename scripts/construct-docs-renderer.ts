/**
 * Renders the API reference of docs/construct.md from the construct's declarations: the props
 * interfaces (each prop, its type, its `@default`, its doc) and the class's public members and
 * methods, read from the sources with the TypeScript compiler, so the reference says what the
 * code declares. `npm run generate:docs` writes it; a unit test checks it is current.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import type { DocsTable } from './settings-docs-renderer.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The declarations the reference covers, in the order a reader needs them. */
const SOURCES = [
  {
    file: 'infra/constructs/poller-props.ts',
    interfaces: ['BankingEventsPollerProps', 'PollerProgram', 'GapRepairOptions'],
  },
  {
    file: 'infra/constructs/event-routing.ts',
    interfaces: ['EventRouteOptions'],
  },
  {
    file: 'infra/constructs/banking-events-poller.ts',
    interfaces: ['SubscriberGrantOptions', 'SubscriberGrant'],
  },
  {
    file: 'infra/constructs/poller-bus.ts',
    interfaces: ['IPollerBus'],
  },
] as const;
const CLASS = { file: 'infra/constructs/banking-events-poller.ts', name: 'BankingEventsPoller' } as const;

function sourceOf(file: string): ts.SourceFile {
  const full = path.join(REPO_ROOT, file);
  return ts.createSourceFile(full, readFileSync(full, 'utf8'), ts.ScriptTarget.Latest, true);
}

function declarationsOf<T extends ts.Node>(source: ts.SourceFile, is: (node: ts.Node) => node is T): T[] {
  const found: T[] = [];
  source.forEachChild((node) => {
    if (is(node)) found.push(node);
  });
  return found;
}

function commentText(comment: string | ts.NodeArray<ts.JSDocComment> | undefined): string {
  if (comment === undefined) return '';
  return typeof comment === 'string' ? comment : comment.map((part) => part.getText()).join('');
}

/** The doc of a declaration as one line: its text, without tags. */
function docOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return docs
    .map((doc) => commentText(doc.comment))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function tagOf(node: ts.Node, name: string): string | undefined {
  const tag = ts.getJSDocTags(node).find((candidate) => candidate.tagName.text === name);
  return tag === undefined ? undefined : commentText(tag.comment).replace(/\s+/g, ' ').trim();
}

/** A Markdown table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replaceAll('|', '\\|').trim();
}

function code(text: string): string {
  return `\`${cell(text)}\``;
}

function interfaceTable(source: ts.SourceFile, declaration: ts.InterfaceDeclaration): string[] {
  const rows = declaration.members.filter(ts.isPropertySignature).map((member) => {
    const name = member.name.getText(source) + (member.questionToken === undefined ? '' : '?');
    const type = member.type?.getText(source) ?? 'unknown';
    const fallback = tagOf(member, 'default');
    return `| ${code(name)} | ${code(type)} | ${fallback === undefined ? '' : cell(fallback)} | ${cell(docOf(member))} |`;
  });
  // A behavioural interface (`I…`) has methods too: each as the class's methods are shown.
  const methods = declaration.members.filter(ts.isMethodSignature).map((member) => {
    const parameters = member.parameters.map((parameter) => parameter.getText(source)).join(', ');
    const returns = member.type?.getText(source) ?? 'void';
    return `| ${code(`${member.name.getText(source)}(${parameters}): ${returns}`)} | ${cell(docOf(member))} |`;
  });
  return [
    `### \`${declaration.name.text}\``,
    '',
    ...(docOf(declaration) === '' ? [] : [docOf(declaration), '']),
    '| Prop | Type | Default | Meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
    ...(methods.length === 0 ? [] : ['| Method | Meaning |', '| --- | --- |', ...methods, '']),
  ];
}

function isPublic(member: ts.ClassElement): boolean {
  const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
  return (
    !modifiers.some((modifier) =>
      [ts.SyntaxKind.PrivateKeyword, ts.SyntaxKind.ProtectedKeyword].includes(modifier.kind),
    ) &&
    member.name !== undefined &&
    !ts.isPrivateIdentifier(member.name)
  );
}

function classReference(source: ts.SourceFile, declaration: ts.ClassDeclaration): string[] {
  const members = declaration.members.filter(isPublic);
  // A getter reads like a property; an optional member is marked as an optional prop is.
  const properties = members
    .filter(
      (member): member is ts.PropertyDeclaration | ts.GetAccessorDeclaration =>
        ts.isPropertyDeclaration(member) || ts.isGetAccessorDeclaration(member),
    )
    .map((member) => {
      const type = member.type?.getText(source) ?? 'unknown';
      const optional = ts.isPropertyDeclaration(member) && member.questionToken !== undefined;
      return `| ${code(member.name.getText(source) + (optional ? '?' : ''))} | ${code(type)} | ${cell(docOf(member))} |`;
    });
  const methods = members.filter(ts.isMethodDeclaration).map((member) => {
    const parameters = member.parameters.map((parameter) => parameter.getText(source)).join(', ');
    const returns = member.type?.getText(source) ?? 'void';
    return `| ${code(`${member.name.getText(source)}(${parameters}): ${returns}`)} | ${cell(docOf(member))} |`;
  });
  return [
    `### \`${declaration.name?.text}\``,
    '',
    ...(docOf(declaration) === '' ? [] : [docOf(declaration), '']),
    '| Member | Type | Meaning |',
    '| --- | --- | --- |',
    ...properties,
    '',
    '| Method | Meaning |',
    '| --- | --- |',
    ...methods,
    '',
  ];
}

export const CONSTRUCT_REFERENCE: DocsTable = {
  file: 'docs/construct.md',
  name: 'construct:reference',
  source: 'the construct’s declarations',
  render() {
    const classSource = sourceOf(CLASS.file);
    const construct = declarationsOf(classSource, ts.isClassDeclaration).find(
      (declaration) => declaration.name?.text === CLASS.name,
    );
    if (construct === undefined) throw new Error(`${CLASS.file} declares no class ${CLASS.name}`);
    const interfaces = SOURCES.flatMap(({ file, interfaces: names }) => {
      const source = sourceOf(file);
      const declared = declarationsOf(source, ts.isInterfaceDeclaration);
      return names.map((name) => {
        const declaration = declared.find((candidate) => candidate.name.text === name);
        if (declaration === undefined) throw new Error(`${file} declares no interface ${name}`);
        return interfaceTable(source, declaration);
      });
    });
    return [...classReference(classSource, construct), ...interfaces.flat()].join('\n').trimEnd();
  },
};
