import { describe, expect, it } from "vitest"
import { Option } from "effect"
import * as Calendar from "../../src/metrics/Calendar.ts"
import * as Metrics from "../../src/metrics/Metrics.ts"

const day = (text: string) => Option.getOrThrow(Calendar.parseDate(text))
const zone = (name: string) => Option.getOrThrow(Calendar.zone(name))
const range = (from: string, to: string, tz: string): Calendar.Range => ({
  from: day(from),
  to: day(to),
  zone: zone(tz)
})
const iso = (ms: number) => new Date(ms).toISOString()

describe("Calendar", () => {
  it("reads only real dates written as YYYY-MM-DD, and only IANA zone names", () => {
    expect(Calendar.formatDate(day("2024-02-29"))).toBe("2024-02-29")
    for (const text of ["2026-02-29", "2026-13-01", "2026-1-01", "26-01-01", "2026-01-01T00:00:00Z", ""])
      expect(Option.isNone(Calendar.parseDate(text)), text).toBe(true)
    expect(zone("Europe/Berlin").id).toBe("Europe/Berlin")
    for (const name of ["+03:00", "-0300", "Mars/Olympus", "", "GMT+3 "])
      expect(Option.isNone(Calendar.zone(name)), name).toBe(true)
  })

  it("starts a day at its midnight, or after the jump where clocks skip midnight", () => {
    expect(iso(Calendar.startOfDate(day("2026-10-25"), zone("Europe/Berlin")))).toBe("2026-10-24T22:00:00.000Z")
    expect(iso(Calendar.startOfDate(day("2026-10-26"), zone("Europe/Berlin")))).toBe("2026-10-25T23:00:00.000Z")
    // São Paulo skipped 00:00-01:00 on 2018-11-04: the day began at 01:00 -02:00.
    expect(iso(Calendar.startOfDate(day("2018-11-04"), zone("America/Sao_Paulo")))).toBe("2018-11-04T03:00:00.000Z")
  })

  it("gives a 25-hour fall-back day 25 hourly buckets, with the repeated hour labelled by its offset", () => {
    const { starts, bounds } = Calendar.buckets(range("2026-10-25", "2026-10-25", "Europe/Berlin"), "hour")
    expect(starts).toHaveLength(25)
    expect(bounds).toHaveLength(26)
    expect(starts.slice(1, 5).map((at) => Calendar.formatInstant(at, zone("Europe/Berlin")))).toEqual([
      "2026-10-25T01:00:00+02:00",
      "2026-10-25T02:00:00+02:00",
      "2026-10-25T02:00:00+01:00",
      "2026-10-25T03:00:00+01:00"
    ])
    expect(iso(bounds[25]!)).toBe("2026-10-25T23:00:00.000Z")
  })

  it("labels weeks from Monday and months from the 1st, counting only from the range's start", () => {
    const weeks = Calendar.buckets(range("2026-11-04", "2026-11-10", "UTC"), "week")
    expect(weeks.starts.map(iso)).toEqual(["2026-11-02T00:00:00.000Z", "2026-11-09T00:00:00.000Z"])
    expect(weeks.bounds.map(iso)).toEqual([
      "2026-11-04T00:00:00.000Z",
      "2026-11-09T00:00:00.000Z",
      "2026-11-11T00:00:00.000Z"
    ])
    const months = Calendar.buckets(range("2026-01-31", "2026-03-01", "America/Sao_Paulo"), "month")
    expect(months.starts.map(iso)).toEqual([
      "2026-01-01T03:00:00.000Z",
      "2026-02-01T03:00:00.000Z",
      "2026-03-01T03:00:00.000Z"
    ])
  })

  it("puts an instant in the bucket whose bounds hold it, start included and end excluded", () => {
    const bounds = [0, 10, 20]
    expect([-1, 0, 9, 10, 19, 20].map((at) => Calendar.bucketOf(bounds, at))).toEqual([-1, 0, 0, 1, 1, -1])
    expect(Calendar.countPerBucket(bounds, [0, 5, 10, 25])).toEqual([2, 1])
    expect(
      Calendar.sumPerBucket(bounds, [
        [0, 7],
        [19, 3],
        [20, 100]
      ])
    ).toEqual([7, 3])
  })
})

describe("Metrics.durationStats", () => {
  it("rounds the mean and interpolates percentiles as percentile_cont does", () => {
    expect(Metrics.durationStats([])).toEqual({ count: 0, avg: null, p50: null, p90: null })
    expect(Metrics.durationStats([30, 10, 20, 100])).toEqual({ count: 4, avg: 40, p50: 25, p90: 79 })
  })
})
