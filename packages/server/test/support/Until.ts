/** Probes every 200 ms until `done` holds or `timeoutMs` passes; the last value either way. */
export const until = async <A>(probe: () => Promise<A>, done: (value: A) => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  let value = await probe()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    value = await probe()
  }
  return value
}
