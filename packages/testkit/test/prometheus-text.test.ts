import { describe, expect, it } from "vitest"
import * as PrometheusText from "../src/observability/PrometheusText.ts"

/** An exposition of the given lines, each ended by a newline as the format requires. */
const text = (...lines: ReadonlyArray<string>) => lines.map((line) => `${line}\n`).join("")

const VALID = text(
  "# HELP http_requests_total Requests served, by method and status.",
  "# TYPE http_requests_total counter",
  'http_requests_total{method="GET",status="200"} 12',
  'http_requests_total{method="POST",status="201"} 3',
  'http_requests_total{method="GET",status="404"} 1',
  "# HELP http_request_duration_seconds Time to serve a request.",
  "# TYPE http_request_duration_seconds histogram",
  'http_request_duration_seconds_bucket{route="/v1/leads",le="0.1"} 10',
  'http_request_duration_seconds_bucket{route="/v1/leads",le="0.5"} 14',
  'http_request_duration_seconds_bucket{route="/v1/leads",le="+Inf"} 15',
  'http_request_duration_seconds_sum{route="/v1/leads"} 2.5',
  'http_request_duration_seconds_count{route="/v1/leads"} 15',
  'http_request_duration_seconds_bucket{route="/v1/orders",le="0.1"} 1',
  'http_request_duration_seconds_bucket{route="/v1/orders",le="0.5"} 1',
  'http_request_duration_seconds_bucket{route="/v1/orders",le="+Inf"} 2',
  'http_request_duration_seconds_sum{route="/v1/orders"} 0.75',
  'http_request_duration_seconds_count{route="/v1/orders"} 2',
  "# HELP outbox_pending Events waiting to be delivered.",
  "# TYPE outbox_pending gauge",
  "outbox_pending 4 1700000000000"
)

/** A gauge's HELP and TYPE, for the examples that are about something else. */
const gauge = (name: string) => [`# HELP ${name} A gauge.`, `# TYPE ${name} gauge`]

/** A histogram's HELP and TYPE followed by the given lines. */
const histogram = (...lines: ReadonlyArray<string>) =>
  text("# HELP latency_seconds Latency.", "# TYPE latency_seconds histogram", ...lines)

describe("PrometheusText.parse", () => {
  it("reads families, types, help and samples in order", () => {
    expect(PrometheusText.parse(VALID).families.map(({ name, type, help }) => ({ name, type, help }))).toEqual([
      { name: "http_requests_total", type: "counter", help: "Requests served, by method and status." },
      { name: "http_request_duration_seconds", type: "histogram", help: "Time to serve a request." },
      { name: "outbox_pending", type: "gauge", help: "Events waiting to be delivered." }
    ])
    expect(PrometheusText.parse(VALID).families[2]!.samples).toEqual([{ name: "outbox_pending", labels: {}, value: 4 }])
  })

  it("unescapes label values and HELP docstrings exactly", () => {
    const exposition = PrometheusText.parse(
      text(
        "# HELP files_open Files open\\nper path, see C:\\\\docs.",
        "# TYPE files_open gauge",
        'files_open{path="C:\\\\dir\\"x\\"\\nend",mode="r" , } 2'
      )
    )
    expect(exposition.families).toEqual([
      {
        name: "files_open",
        type: "gauge",
        help: "Files open\nper path, see C:\\docs.",
        samples: [{ name: "files_open", labels: { path: 'C:\\dir"x"\nend', mode: "r" }, value: 2 }]
      }
    ])
  })

  it("reads +Inf, -Inf, NaN, exponents and a timestamp", () => {
    const exposition = PrometheusText.parse(
      text(...gauge("g"), 'g{k="a"} +Inf', 'g{k="b"} -Inf', 'g{k="c"} NaN 123', 'g{k="d"} -1.5e3 -42', 'g{k="e"} .5')
    )
    expect(exposition.families[0]!.samples.map((sample) => sample.value)).toEqual([
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      Number.NaN,
      -1500,
      0.5
    ])
  })

  it("calls a family without a TYPE line untyped and skips lines it cannot read", () => {
    expect(PrometheusText.parse(text("loose 1", "broken{ 2")).families).toEqual([
      { name: "loose", type: "untyped", help: undefined, samples: [{ name: "loose", labels: {}, value: 1 }] }
    ])
  })
})

describe("PrometheusText.value and sum", () => {
  const exposition = PrometheusText.parse(VALID)

  it("finds the sample whose labels include the given ones", () => {
    expect(PrometheusText.value(exposition, "http_requests_total", { method: "POST" })).toBe(3)
    expect(PrometheusText.value(exposition, "http_requests_total", { method: "GET", status: "404" })).toBe(1)
    expect(PrometheusText.value(exposition, "outbox_pending")).toBe(4)
    expect(
      PrometheusText.value(exposition, "http_request_duration_seconds_bucket", { route: "/v1/orders", le: "+Inf" })
    ).toBe(2)
  })

  it("is undefined when no sample matches, by name or by a label's exact value", () => {
    expect(PrometheusText.value(exposition, "http_requests", { method: "POST" })).toBeUndefined()
    expect(PrometheusText.value(exposition, "http_requests_total", { method: "post" })).toBeUndefined()
    expect(PrometheusText.value(exposition, "http_requests_total", { method: "GET", region: "eu" })).toBeUndefined()
  })

  it("sums every matching sample, 0 when none", () => {
    expect(PrometheusText.sum(exposition, "http_requests_total")).toBe(16)
    expect(PrometheusText.sum(exposition, "http_requests_total", { method: "GET" })).toBe(13)
    expect(PrometheusText.sum(exposition, "http_request_duration_seconds_count")).toBe(17)
    expect(PrometheusText.sum(exposition, "http_requests_total", { method: "DELETE" })).toBe(0)
  })

  it("gives the delta between two scrapes", () => {
    const before = PrometheusText.parse(VALID)
    const after = PrometheusText.parse(
      VALID.replace(
        'http_requests_total{method="POST",status="201"} 3',
        'http_requests_total{method="POST",status="201"} 5'
      )
    )
    const posts = (scrape: PrometheusText.Exposition) =>
      PrometheusText.sum(scrape, "http_requests_total", { method: "POST" })
    expect(posts(after) - posts(before)).toBe(2)
  })
})

describe("PrometheusText.check", () => {
  it("passes a valid exposition with a counter, a labelled histogram and a gauge", () => {
    expect(PrometheusText.check(VALID)).toEqual([])
  })

  it("passes an empty exposition, comments and blank lines", () => {
    expect(PrometheusText.check("")).toEqual([])
    expect(PrometheusText.check(text("# a comment", "", ...gauge("g"), "  g 1  "))).toEqual([])
  })

  it("reports a sample before its family's TYPE line", () => {
    expect(PrometheusText.check(text("g 1", "# HELP g A gauge.", "# TYPE g gauge"))).toEqual([
      "line 3: TYPE for g comes after its sample on line 1"
    ])
  })

  it("reports a repeated TYPE and a repeated HELP", () => {
    expect(PrometheusText.check(text(...gauge("g"), "# TYPE g gauge", "# HELP g Again.", "g 1"))).toEqual([
      "line 3: TYPE for g repeats line 2",
      "line 4: HELP for g repeats line 1"
    ])
  })

  it("reports invalid metric names on HELP, TYPE and sample lines", () => {
    expect(PrometheusText.check(text(...gauge("http-requests"), "http-requests 1"))).toEqual([
      "line 1: invalid metric name http-requests",
      "line 2: invalid metric name http-requests",
      "line 3: invalid metric name http-requests"
    ])
  })

  it("reports invalid and reserved label names", () => {
    expect(PrometheusText.check(text(...gauge("g"), 'g{a:b="1"} 1', 'g{1a="1"} 2', 'g{__name="1"} 3'))).toEqual([
      "line 3: invalid label name a:b",
      "line 4: invalid label name 1a",
      "line 5: label name __name is reserved"
    ])
  })

  it("reports a label repeated on one sample", () => {
    expect(PrometheusText.check(text(...gauge("g"), 'g{a="1",a="2"} 1'))).toEqual(["line 3: label a repeated"])
  })

  it("reports a series repeated, whatever the order of its labels", () => {
    expect(PrometheusText.check(text(...gauge("g"), 'g{a="1",b="2"} 1', 'g{b="2",a="1"} 2'))).toEqual([
      'line 4: series g{b="2",a="1"} repeats line 3'
    ])
  })

  it("reports a family without HELP and one without TYPE", () => {
    expect(PrometheusText.check(text("# TYPE g gauge", "g 1", "# HELP h An untyped one.", "h 2"))).toEqual([
      "metric g has no HELP",
      "metric h has no TYPE"
    ])
  })

  it("reports a counter whose name does not end with _total", () => {
    expect(PrometheusText.check(text("# HELP jobs Jobs run.", "# TYPE jobs counter", "jobs 1"))).toEqual([
      "metric jobs is a counter but its name does not end with _total"
    ])
  })

  it("reports a counter sample not named as its family", () => {
    expect(
      PrometheusText.check(text("# HELP jobs Jobs run.", "# TYPE jobs counter", "jobs_total 1", "jobs_created 5"))
    ).toEqual([
      "line 3: sample jobs_total does not belong to counter jobs",
      "line 4: sample jobs_created does not belong to counter jobs",
      "metric jobs is a counter but its name does not end with _total"
    ])
  })

  // Route b's buckets are written out of order: the check sorts by le, so 5 at 0.1 above 4 at 1 is the fault.
  it("reports histogram buckets that fall as le rises, per label set", () => {
    expect(
      PrometheusText.check(
        histogram(
          'latency_seconds_bucket{route="a",le="0.1"} 1',
          'latency_seconds_bucket{route="a",le="0.5"} 2',
          'latency_seconds_bucket{route="a",le="+Inf"} 3',
          'latency_seconds_sum{route="a"} 1',
          'latency_seconds_count{route="a"} 3',
          'latency_seconds_bucket{route="b",le="1"} 4',
          'latency_seconds_bucket{route="b",le="0.1"} 5',
          'latency_seconds_bucket{route="b",le="+Inf"} 5',
          'latency_seconds_sum{route="b"} 1',
          'latency_seconds_count{route="b"} 5'
        )
      )
    ).toEqual(['metric latency_seconds{route="b"}: bucket le="1" has 4, less than 5 at le="0.1"'])
  })

  it("reports a histogram without a +Inf bucket", () => {
    expect(
      PrometheusText.check(
        histogram('latency_seconds_bucket{le="0.1"} 1', "latency_seconds_sum 1", "latency_seconds_count 1")
      )
    ).toEqual(['metric latency_seconds: no le="+Inf" bucket'])
  })

  it("reports a +Inf bucket that differs from _count", () => {
    expect(
      PrometheusText.check(
        histogram(
          'latency_seconds_bucket{method="GET",le="+Inf"} 3',
          'latency_seconds_sum{method="GET"} 1',
          'latency_seconds_count{method="GET"} 4'
        )
      )
    ).toEqual(['metric latency_seconds{method="GET"}: le="+Inf" bucket has 3 but latency_seconds_count is 4'])
  })

  it("reports a histogram label set without _sum or _count", () => {
    expect(
      PrometheusText.check(
        histogram(
          'latency_seconds_bucket{route="a",le="+Inf"} 1',
          'latency_seconds_count{route="a"} 1',
          'latency_seconds_bucket{route="b",le="+Inf"} 1',
          'latency_seconds_sum{route="b"} 1'
        )
      )
    ).toEqual([
      'metric latency_seconds{route="a"}: no latency_seconds_sum',
      'metric latency_seconds{route="b"}: no latency_seconds_count'
    ])
  })

  it("reports a bucket without le or with an le that is not a number", () => {
    expect(
      PrometheusText.check(
        histogram(
          'latency_seconds_bucket{le="+Inf"} 1',
          "latency_seconds_bucket 1",
          'latency_seconds_bucket{le="fast"} 1',
          "latency_seconds_sum 1",
          "latency_seconds_count 1"
        )
      )
    ).toEqual([
      "line 4: bucket latency_seconds_bucket has no le label",
      'line 5: le="fast" of latency_seconds_bucket is not a number'
    ])
  })

  it("reports a sample that a histogram does not own", () => {
    expect(
      PrometheusText.check(
        histogram(
          'latency_seconds_bucket{le="+Inf"} 1',
          "latency_seconds_sum 1",
          "latency_seconds_count 1",
          "latency_seconds 1"
        )
      )
    ).toEqual(["line 6: sample latency_seconds does not belong to histogram latency_seconds"])
  })

  it("reports a family whose lines are not one group", () => {
    expect(PrometheusText.check(text(...gauge("a"), "a 1", ...gauge("b"), "b 1", 'a{x="y"} 2'))).toEqual([
      "line 7: metric a continues after another metric's lines"
    ])
  })

  it.each([
    ['{a="b"} 1', "no metric name"],
    ["g{a} 1", "expected = after label a"],
    ["g{a=b} 1", 'expected " to open the value of label a'],
    ['g{a="b} 1', "unterminated value of label a"],
    ['g{a="b" c="d"} 1', "expected , or } after label a"],
    ['g{="b"} 1', "expected a label name in g"],
    ['g{a="\\t"} 1', "invalid escape \\t in the value of label a"],
    ["g", "no value for g"],
    ["g 1,5", "value 1,5 is not a number"],
    ["g 0x10", "value 0x10 is not a number"],
    ["g Inf", "value Inf is not a number"],
    ["g 1 12.5", "timestamp 12.5 is not an integer"],
    ["g 1 2 3", "unexpected 3 after the timestamp"],
    ["# TYPE g", "TYPE needs a metric name and a type"],
    ["# HELP", "HELP without a metric name"]
  ])("reports the unparsable line %s", (line, reason) => {
    expect(PrometheusText.check(text(...gauge("g"), line))).toEqual([`line 3: cannot parse: ${reason}`])
  })

  it("reports an invalid escape in HELP", () => {
    expect(PrometheusText.check(text('# HELP g Say \\"hi\\".', "# TYPE g gauge", "g 1"))).toEqual([
      'line 1: cannot parse: invalid escape \\" in the HELP of g',
      "metric g has no HELP"
    ])
  })

  it("reports an unknown type", () => {
    expect(PrometheusText.check(text("# HELP g A gauge.", "# TYPE g meter", "g 1"))).toEqual([
      "line 2: unknown type meter for g",
      "metric g has no TYPE"
    ])
  })

  it("reports text that does not end with a newline", () => {
    expect(PrometheusText.check(VALID.trimEnd())).toEqual(["line 20: the text does not end with a newline"])
  })
})
