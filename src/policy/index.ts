export { compileExpression } from './compile.js';
export type { CompiledExpression } from './compile.js';
export { celValue, evaluatePolicies } from './evaluate.js';
export type { PolicyInput } from './evaluate.js';
