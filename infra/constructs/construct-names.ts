/** One rule for output names, shared with the CLI that reads them: see `functions/core/name-rules.ts`. */
export { pascalCase } from '../../functions/core/name-rules.ts';
