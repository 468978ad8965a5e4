import type { Effect, Schema } from "effect"
import type * as Calendar from "./Calendar.ts"

/** A timeseries a slice counts (`leads_created`): one value per bucket. */
export interface Series<R> {
  readonly description: string
  /** A money metric: the request names one currency and the values are its minor units. */
  readonly perCurrency?: boolean
  readonly values: (
    accountId: string,
    bounds: Calendar.Bounds,
    currency: string | undefined
  ) => Effect.Effect<ReadonlyArray<number>, never, R>
}

/**
 * What a slice counts for analytics (docs/contract-commerce-ai.md §7): its part of the summary, under
 * its key, and its timeseries by metric name. The slice's own store answers them, so a metric
 * starts counting when its resource lands, with no central switch.
 */
export interface Metrics<Key extends string, S extends Schema.Top, Names extends string, R> {
  readonly key: Key
  readonly summary: S
  readonly summarize: (accountId: string, window: Calendar.Bounds) => Effect.Effect<S["Type"], never, R>
  readonly series: { readonly [N in Names]: Series<R> }
}

export type Any = Metrics<string, Schema.Top, string, any>

export const make = <const Key extends string, S extends Schema.Top, const Names extends string, R>(
  metrics: Metrics<Key, S, Names, R>
): Metrics<Key, S, Names, R> => metrics

/** The services a slice's metrics read (its stores). */
export type Needs<M> = M extends Metrics<string, Schema.Top, string, infer R> ? R : never

/** Durations in whole seconds: how many, their mean and percentiles; null when there are none. */
export interface DurationStats {
  readonly count: number
  readonly avg: number | null
  readonly p50: number | null
  readonly p90: number | null
}

/** `{count, avg, p50, p90}` of durations in seconds, rounded to whole seconds, as `percentile_cont` interpolates. */
export const durationStats = (seconds: ReadonlyArray<number>): DurationStats => {
  const sorted = [...seconds].sort((a, b) => a - b)
  const at = (p: number) => {
    if (sorted.length === 0) return null
    const rank = p * (sorted.length - 1)
    const low = Math.floor(rank)
    const high = Math.ceil(rank)
    return Math.round(sorted[low]! + (sorted[high]! - sorted[low]!) * (rank - low))
  }
  return {
    count: sorted.length,
    avg: sorted.length === 0 ? null : Math.round(sorted.reduce((sum, s) => sum + s, 0) / sorted.length),
    p50: at(0.5),
    p90: at(0.9)
  }
}
