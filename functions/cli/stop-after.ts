/**
 * `--duration`: a signal that aborts after that many seconds. A timer of our own rather than
 * `AbortSignal.timeout`: put into `AbortSignal.any`, Node 20 holds a timeout signal only weakly,
 * and once it is garbage-collected it never fires, so a run would go on past its duration. The
 * pending timer holds this controller; it is unref'd as `AbortSignal.timeout`'s is.
 */
export function stopAfter(seconds: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(
    () => controller.abort(new DOMException(`--duration ${seconds} s elapsed`, 'TimeoutError')),
    seconds * 1000,
  ).unref();
  return controller.signal;
}
