/**
 * A jsii kernel client for tests: an app driven as Python, Java, .NET or Go drive one, through
 * `@jsii/runtime`, with values given as those languages give them. See kernel.ts.
 */
export { type AssemblyTypes, TypeSystem } from './assembly-types.ts';
export { type KernelApp, kernelApp, synthesizedTemplate } from './cdk-app.ts';
export { ForeignValueError, JsiiEnumValue, JsiiObject } from './foreign-values.ts';
export { JsiiKernel, JsiiKernelError, JsiiKernelProtocolError, type StartOptions } from './kernel.ts';
export {
  builtPackage,
  installedPackages,
  JSII_RUNTIME_VERSION,
  type KernelPackage,
  packedPackage,
} from './kernel-files.ts';
