import autocannon from "autocannon"

export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  /** The slowest one in a thousand: where pool waits and pauses show first. */
  readonly p999: number
  readonly non2xx: number
  readonly errors: number
}

export interface LoadOptions {
  readonly url: string
  readonly path: string
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  /** A new body and headers (and path, when given) for every request (unique phone numbers, Idempotency-Keys, queries). */
  readonly next?: () => {
    readonly body?: string | undefined
    readonly headers: Record<string, string>
    readonly path?: string | undefined
  }
  readonly connections: number
  readonly seconds: number
  /** Requests per second offered over all connections (an open load); unset: as fast as answered. */
  readonly rate?: number | undefined
  /** Ends the run early when it settles (a load that lasts as long as some other work); `seconds` stays the bound. */
  readonly until?: Promise<unknown> | undefined
}

const autocannonOptions = (options: LoadOptions) =>
  ({
    url: `${options.url}${options.path}`,
    method: options.method ?? "GET",
    headers: options.headers ?? {},
    connections: options.connections,
    duration: options.seconds,
    ...(options.rate === undefined ? {} : { overallRate: options.rate }),
    ...(options.next === undefined
      ? {}
      : {
          requests: [
            {
              setupRequest: (request: Record<string, unknown>) => {
                const next = options.next!()
                return {
                  ...request,
                  ...(next.body === undefined ? {} : { body: next.body }),
                  ...(next.path === undefined ? {} : { path: next.path }),
                  headers: { ...(request.headers as object), ...next.headers }
                }
              }
            }
          ]
        })
  }) as unknown as autocannon.Options

/** One autocannon run; latencies in milliseconds. */
export const run = (options: LoadOptions): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const instance = autocannon(autocannonOptions(options), (error, result) => {
      if (error) return reject(error)
      resolve({
        requestsPerSecond: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        p999: result.latency.p99_9,
        non2xx: result.non2xx,
        errors: result.errors
      })
    })
    // Either way: a failed import must not leave the load running to its bound.
    options.until?.then(
      () => instance.stop(),
      () => instance.stop()
    )
  })

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

/**
 * Several loads at once (one per server of a group, say), as one: requests per second summed,
 * latencies from their histograms merged (not an average of percentiles); `until` is not used.
 */
export const runTogether = async (loads: ReadonlyArray<LoadOptions>): Promise<LoadResult> => {
  const raw = await Promise.all(
    loads.map(
      (options) =>
        new Promise<any>((resolve, reject) =>
          autocannon(
            { ...autocannonOptions(options), skipAggregateResult: true } as autocannon.Options,
            (error, result) => (error ? reject(error) : resolve(result))
          )
        )
    )
  )
  // Exported by autocannon (the merge its worker threads use) but not in its types.
  const { aggregateResult } = autocannon as unknown as {
    aggregateResult: (results: ReadonlyArray<unknown>, options: { url: string }) => autocannon.Result
  }
  const merged = aggregateResult(raw, { url: loads[0]!.url })
  return {
    requestsPerSecond: raw.reduce((sum, result) => sum + result.totalCompletedRequests / result.duration, 0),
    p50: merged.latency.p50,
    p99: merged.latency.p99,
    p999: merged.latency.p99_9,
    non2xx: raw.reduce((sum, result) => sum + result.non2xx, 0),
    errors: raw.reduce((sum, result) => sum + result.errors, 0)
  }
}
