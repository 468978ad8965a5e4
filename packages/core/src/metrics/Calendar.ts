import { DateTime, Option } from "effect"

/**
 * The calendar arithmetic of analytics, in one pure place: local dates in an IANA zone, the
 * real-time window they cover and the buckets of an interval, right across daylight-saving
 * changes (docs/contract-commerce-ai.md §7, §0a.6). Stores only count rows between the instants given
 * here, so the memory and SQL stores cannot disagree on a bucket's edge.
 */

export const intervals = ["hour", "day", "week", "month"] as const
export type Interval = (typeof intervals)[number]

/** A calendar date as written on the wire, `YYYY-MM-DD`, as days since 1970-01-01. */
export type EpochDay = number

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000

/** Most dates a range may span, `from` and `to` included, per interval; a summary takes the widest. */
export const maxDates: Readonly<Record<Interval | "summary", number>> = {
  hour: 31,
  day: 366,
  week: 1827,
  month: 1827,
  summary: 1827
}

/** An IANA zone by name (`Europe/Berlin`, `UTC`); offsets (`+03:00`) and unknown names are none. */
export const zone = (name: string): Option.Option<DateTime.TimeZone.Named> =>
  /^[A-Za-z]/.test(name) ? DateTime.zoneMakeNamed(name) : Option.none()

/** `2026-11-01` → its epoch day; none when it is not a real date in that exact form. */
export const parseDate = (text: string): Option.Option<EpochDay> => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (match === null) return Option.none()
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const ms = Date.UTC(year, month - 1, day)
  const back = new Date(ms)
  return back.getUTCFullYear() === year && back.getUTCMonth() === month - 1 && back.getUTCDate() === day
    ? Option.some(ms / DAY_MS)
    : Option.none()
}

export const formatDate = (day: EpochDay): string => new Date(day * DAY_MS).toISOString().slice(0, 10)

/** The local date in `zone` at an instant. */
export const dateAt = (at: number, zone: DateTime.TimeZone): EpochDay => {
  const parts = DateTime.toParts(DateTime.makeZonedUnsafe(at, { timeZone: zone }))
  return Date.UTC(parts.year, parts.month - 1, parts.day) / DAY_MS
}

/**
 * The instant a local date begins in `zone`: its midnight, or, where the clocks jump over
 * midnight, the first instant after the jump.
 */
export const startOfDate = (day: EpochDay, zone: DateTime.TimeZone): number => {
  const date = new Date(day * DAY_MS)
  const zoned = DateTime.makeZoned(
    { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() },
    { timeZone: zone, adjustForTimeZone: true, disambiguation: "compatible" }
  )
  return DateTime.toEpochMillis(Option.getOrThrow(zoned))
}

/** `2026-10-25T02:00:00+01:00`: the instant as the zone's wall clock, with its offset then. */
export const formatInstant = (at: number, zone: DateTime.TimeZone): string =>
  DateTime.formatIsoOffset(DateTime.makeZonedUnsafe(at, { timeZone: zone })).replace(/\.000(?=[+-Z])/, "")

/** The local dates `from`..`to`, both included, and their zone. */
export interface Range {
  readonly from: EpochDay
  readonly to: EpochDay
  readonly zone: DateTime.TimeZone.Named
}

/** How many dates the range spans, both ends included. */
export const dates = (range: Range): number => range.to - range.from + 1

/** The real time the range covers: from the start of `from` to the start of the day after `to`. */
export const window = (range: Range): Bounds => [
  startOfDate(range.from, range.zone),
  startOfDate(range.to + 1, range.zone)
]

/**
 * Consecutive instants in epoch milliseconds: bucket i holds `bounds[i] <= t < bounds[i + 1]`.
 * A window is the bounds of one bucket.
 */
export type Bounds = ReadonlyArray<number>

/** The buckets of a range: each one's label (its calendar start) and the instants that count in it. */
export interface Buckets {
  /** Epoch milliseconds each bucket is labelled with: its local calendar start. */
  readonly starts: ReadonlyArray<number>
  /** One more than `starts`: the first bucket counts from the range's start, the last up to its end. */
  readonly bounds: Bounds
}

/** Monday on or before the date (1970-01-01 was a Thursday). */
const mondayOf = (day: EpochDay): EpochDay => day - ((day + 3) % 7)

const firstOfMonth = (day: EpochDay): EpochDay => {
  const date = new Date(day * DAY_MS)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS
}

const nextMonth = (day: EpochDay): EpochDay => {
  const date = new Date(day * DAY_MS)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS
}

/**
 * Days, weeks (Monday) and months are local calendar units, labelled with their local start
 * even where that lies before `from` (a week, a month); hours are consecutive hours of real
 * time from the range's start, so a 25-hour day has 25 of them and none is lost.
 */
export const buckets = (range: Range, interval: Interval): Buckets => {
  const [start, end] = window(range) as [number, number]
  if (interval === "hour") {
    const starts: Array<number> = []
    for (let at = start; at < end; at += HOUR_MS) starts.push(at)
    return { starts, bounds: [...starts, end] }
  }
  const first = interval === "day" ? range.from : interval === "week" ? mondayOf(range.from) : firstOfMonth(range.from)
  const next = (day: EpochDay) => (interval === "day" ? day + 1 : interval === "week" ? day + 7 : nextMonth(day))
  const days: Array<EpochDay> = []
  for (let day = first; day <= range.to; day = next(day)) days.push(day)
  const starts = days.map((day) => startOfDate(day, range.zone))
  return { starts, bounds: [start, ...starts.slice(1), end] }
}

/** The bucket of each instant among the bounds, -1 outside them: the stores' memory twin of SQL's `width_bucket`. */
export const bucketOf = (bounds: Bounds, at: number): number => {
  if (bounds.length < 2 || at < bounds[0]! || at >= bounds[bounds.length - 1]!) return -1
  let low = 0
  let high = bounds.length - 1
  while (high - low > 1) {
    const middle = (low + high) >> 1
    if (bounds[middle]! <= at) low = middle
    else high = middle
  }
  return low
}

/** The values of `[instant, value]` pairs summed per bucket; those outside the bounds are left out. */
export const sumPerBucket = (bounds: Bounds, items: Iterable<readonly [number, number]>): Array<number> => {
  const sums = new Array<number>(Math.max(0, bounds.length - 1)).fill(0)
  for (const [at, value] of items) {
    const bucket = bucketOf(bounds, at)
    if (bucket >= 0) sums[bucket]! += value
  }
  return sums
}

/** How many of the instants fall in each bucket. */
export const countPerBucket = (bounds: Bounds, instants: Iterable<number>): Array<number> =>
  sumPerBucket(
    bounds,
    Array.from(instants, (at) => [at, 1] as const)
  )
