/**
 * An esbuild plugin that honours a package's own `"sideEffects": false` for the files a bare import
 * of it resolves to. esbuild reads the flag from the package.json nearest to each file, and dual
 * packages built with tshy keep a `{"type": "module"}` package.json in `dist/esm/` that hides the
 * package's flag. `@inquirer/prompts` is one: without this, importing three of its prompts inlines
 * all ten, the editor's character-set tables (iconv-lite, chardet) included, about 540 KB more CLI.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from 'esbuild';

/** Marks the resolutions made from inside the plugin, so it does not resolve its own lookups. */
const RESOLVING = Symbol('declared-side-effects');

export const declaredSideEffects: Plugin = {
  name: 'declared-side-effects',
  setup(build) {
    const declared = new Map<string, boolean>();
    /** Whether the package at `root` says its files have no side effects (`"sideEffects": false`). */
    const isPure = (root: string): boolean => {
      let pure = declared.get(root);
      if (pure === undefined) {
        const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
          sideEffects?: unknown;
        };
        pure = manifest.sideEffects === false;
        declared.set(root, pure);
      }
      return pure;
    };
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === RESOLVING) return undefined;
      const { kind, resolveDir, importer } = args;
      const resolved = await build.resolve(args.path, { kind, resolveDir, importer, pluginData: RESOLVING });
      if (resolved.errors.length > 0 || resolved.external || resolved.namespace !== 'file') return undefined;
      const marker = `${path.sep}node_modules${path.sep}${packageNameOf(args.path).split('/').join(path.sep)}${path.sep}`;
      const at = resolved.path.lastIndexOf(marker);
      if (at === -1 || !isPure(resolved.path.slice(0, at + marker.length))) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/** `@scope/name` or `name`, from a bare specifier that may name a subpath. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}
