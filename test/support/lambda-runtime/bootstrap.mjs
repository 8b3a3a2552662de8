/**
 * A stand-in for the Lambda Node.js runtime interface client (aws-lambda-nodejs-runtime-interface-
 * client, src/Runtime.js and src/index.mjs), run as a plain `node` process by `lambda-container.ts`.
 * It talks to the Runtime API the same way (`/2018-06-01/runtime/invocation/next`, then `/response`
 * or `/error`) and keeps the rules that decide whether a handler works under Lambda:
 *
 * - an event loop that empties while the async handler's promise is pending ends the invocation
 *   (the client's `beforeExit` listener posts a `Runtime.NodeJsExit` error; older clients posted a
 *   null response) and the next invocation is fetched, with the handler's work left half done;
 * - while an invocation runs, nothing of the runtime's own keeps the event loop alive: each call to
 *   the Runtime API is its own short-lived connection;
 * - module state survives between invocations (a warm container); `getRemainingTimeInMillis()`
 *   counts down to the `Lambda-Runtime-Deadline-Ms` the Runtime API sent;
 * - an uncaught exception or unhandled rejection reports the invocation as failed and ends the
 *   process.
 *
 * The parent freezes this process (SIGSTOP) while it waits for the next invocation, as Lambda
 * freezes the sandbox, and kills it at the deadline.
 *
 * Environment (set by Lambda, or here by the harness): AWS_LAMBDA_RUNTIME_API, LAMBDA_TASK_ROOT,
 * _HANDLER (`index.handler`), AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE.
 */
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const API = process.env.AWS_LAMBDA_RUNTIME_API;
const [apiHost, apiPort] = API.split(':');
/** Written to stdout and stderr after each invocation, so the parent knows both pipes are drained. */
const END_MARK = '\u0000LAMBDA-INVOCATION-END\n';

/** One Runtime API call on a connection of its own (no agent, no keep-alive socket left behind). */
function call(method, pathname, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
    const request = http.request(
      {
        host: apiHost,
        port: Number(apiPort),
        path: `/2018-06-01/runtime${pathname}`,
        method,
        agent: false,
        headers: payload === undefined ? headers : { ...headers, 'content-length': payload.length },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ headers: response.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

function errorBody(error) {
  const value = error instanceof Error ? error : new Error(String(error));
  return JSON.stringify({
    errorType: value.name,
    errorMessage: value.message,
    stackTrace: (value.stack ?? '').split('\n').slice(1),
  });
}

async function loadHandler() {
  const [moduleName, exportName] = process.env._HANDLER.split('.');
  const root = process.env.LAMBDA_TASK_ROOT;
  const module = await import(pathToFileURL(path.join(root, `${moduleName}.mjs`)).href);
  const handler = module[exportName];
  if (typeof handler !== 'function') throw new TypeError(`${process.env._HANDLER} is not a function`);
  return handler;
}

let current;
const lateReports = new Set();
process.on('beforeExit', () => current?.onEmptyEventLoop());
const fatal = (kind) => (error) => {
  const id = current?.requestId;
  const report = id
    ? call('POST', `/invocation/${id}/error`, errorBody(error), {
        'lambda-runtime-function-error-type': kind,
      })
    : Promise.resolve();
  report.finally(() => process.exit(kind === 'Runtime.UnhandledPromiseRejection' ? 128 : 129));
};
process.on('uncaughtException', fatal('Runtime.UncaughtException'));
process.on('unhandledRejection', fatal('Runtime.UnhandledPromiseRejection'));

let handler;
try {
  handler = await loadHandler();
} catch (error) {
  await call('POST', '/init/error', errorBody(error), {
    'lambda-runtime-function-error-type': 'Runtime.ImportModuleError',
  });
  process.exit(1);
}

for (;;) {
  const next = await call('GET', '/invocation/next');
  const requestId = next.headers['lambda-runtime-aws-request-id'];
  const deadline = Number(next.headers['lambda-runtime-deadline-ms']);
  const context = {
    awsRequestId: requestId,
    invokedFunctionArn: next.headers['lambda-runtime-invoked-function-arn'],
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    logGroupName: `/aws/lambda/${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
    logStreamName: 'harness',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => deadline - Date.now(),
  };

  await new Promise((invocationDone) => {
    let answered = false;
    const answer = (pathname, body, headers) => {
      answered = true;
      current = undefined;
      call('POST', `/invocation/${requestId}${pathname}`, body, headers).then(invocationDone, invocationDone);
    };
    current = {
      requestId,
      onEmptyEventLoop: () =>
        answer(
          '/error',
          errorBody(
            Object.assign(
              new Error(
                'The Lambda runtime client detected an unexpected Node.js exit code. This is most commonly caused by a Promise that was never settled.',
              ),
              { name: 'Runtime.NodeJsExit' },
            ),
          ),
          { 'lambda-runtime-function-error-type': 'Runtime.NodeJsExit' },
        ),
    };
    // The real client ignores a settlement after its answer; the harness is told, for tests about
    // work that was frozen half done and woke up inside a later invocation.
    const reportLate = (outcome) =>
      lateReports.add(
        call('POST', `/invocation/${requestId}/late`, JSON.stringify({ outcome })).catch(() => {}),
      );
    let result;
    try {
      result = Promise.resolve(handler(JSON.parse(next.body), context));
    } catch (error) {
      answer('/error', errorBody(error), { 'lambda-runtime-function-error-type': 'Runtime.HandlerError' });
      return;
    }
    result.then(
      (value) => {
        if (answered) reportLate('response');
        else answer('/response', JSON.stringify(value ?? null));
      },
      (error) => {
        if (answered) reportLate('error');
        else
          answer('/error', errorBody(error), {
            'lambda-runtime-function-error-type': 'Runtime.HandlerError',
          });
      },
    );
  });
  // Delivered before the invocation counts as over, so the harness sees them in order.
  await Promise.all(lateReports);
  lateReports.clear();
  process.stdout.write(END_MARK);
  process.stderr.write(END_MARK);
}
