/**
 * A reader and checker of the Prometheus text exposition format 0.0.4, so the
 * tests can hold a `/metrics` body to the format without a client library.
 * `parse` keeps what it can read; `check` says what is wrong, each problem
 * naming its line or its metric, so a failing assertion points at the cause.
 */

export type Type = "counter" | "gauge" | "histogram" | "summary" | "untyped"

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Family {
  readonly name: string
  readonly type: Type
  readonly help: string | undefined
  readonly samples: ReadonlyArray<Sample>
}

export interface Exposition {
  readonly families: ReadonlyArray<Family>
}

/** The families of `text`, in the order they first appear; lines it cannot read are left out. */
export const parse = (text: string): Exposition => ({
  families: scan(text).families.map((family) => ({
    name: family.name,
    type: family.type ?? "untyped",
    help: family.help,
    samples: family.samples.map(({ name, labels, value }) => ({ name, labels, value }))
  }))
})

/** The problems of `text`; an empty array means it is a valid exposition. */
export const check = (text: string): ReadonlyArray<string> => scan(text).problems

/** Whether the sample is named `name` and carries every label of `labels` with that exact value. */
const matches = (sample: Sample, name: string, labels: Readonly<Record<string, string>>) =>
  sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value)

const samplesOf = (exposition: Exposition) => exposition.families.flatMap((family) => family.samples)

/** The value of the first sample named `name` whose labels include `labels`, or undefined. */
export const value = (
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number | undefined => samplesOf(exposition).find((sample) => matches(sample, name, labels))?.value

/** The total of the samples named `name` whose labels include `labels`: 0 when none does. */
export const sum = (exposition: Exposition, name: string, labels: Readonly<Record<string, string>> = {}): number =>
  samplesOf(exposition)
    .filter((sample) => matches(sample, name, labels))
    .reduce((total, sample) => total + sample.value, 0)

// Scanning

const TYPES: ReadonlyArray<string> = ["counter", "gauge", "histogram", "summary", "untyped"]
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
// Go's ParseFloat reads more spellings, but an exporter writes only these.
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const TIMESTAMP = /^[+-]?\d+$/

interface LinedSample extends Sample {
  readonly line: number
}

interface Scanned {
  readonly name: string
  type: Type | undefined
  typeLine: number | undefined
  help: string | undefined
  helpLine: number | undefined
  readonly samples: Array<LinedSample>
}

const toNumber = (token: string): number | undefined =>
  token === "+Inf"
    ? Number.POSITIVE_INFINITY
    : token === "-Inf"
      ? Number.NEGATIVE_INFINITY
      : token === "NaN"
        ? Number.NaN
        : FLOAT.test(token)
          ? Number(token)
          : undefined

/** The sample names a family of the type owns. */
const sampleNames = (name: string, type: Type | undefined): ReadonlyArray<string> =>
  type === "histogram"
    ? [`${name}_bucket`, `${name}_sum`, `${name}_count`]
    : type === "summary"
      ? [name, `${name}_sum`, `${name}_count`]
      : [name]

const escapeValue = (text: string) => text.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n")

const series = (name: string, labels: Readonly<Record<string, string>>) => {
  const entries = Object.entries(labels)
  return entries.length === 0
    ? name
    : `${name}{${entries.map(([key, text]) => `${key}="${escapeValue(text)}"`).join(",")}}`
}

const sortedKey = (name: string, labels: Readonly<Record<string, string>>) =>
  series(name, Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))))

/** Thrown only while reading one line, and turned into that line's problem. */
class Unreadable {
  readonly reason: string
  constructor(reason: string) {
    this.reason = reason
  }
}

/** A HELP docstring allows `\\` and `\n`, a label value also `\"`; any other escape is an error, as in expfmt. */
const unescapeText = (text: string, quotes: boolean, what: string): string => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (char !== "\\") {
      out += char
      continue
    }
    const next = text[++i]
    if (next === "\\") out += "\\"
    else if (next === "n") out += "\n"
    else if (next === '"' && quotes) out += '"'
    else throw new Unreadable(`invalid escape \\${next ?? ""} in ${what}`)
  }
  return out
}

const isBlank = (char: string | undefined) => char === " " || char === "\t"

interface SampleLine {
  readonly name: string
  readonly labels: ReadonlyArray<readonly [string, string]>
  readonly value: number
}

/** One sample line, by hand rather than by one regular expression, so the error can say where it broke. */
const readSample = (line: string): SampleLine => {
  let at = 0
  const skipBlanks = () => {
    while (isBlank(line[at])) at++
  }
  const token = (stops: string) => {
    const start = at
    while (at < line.length && !stops.includes(line[at]!)) at++
    return line.slice(start, at)
  }
  const name = token(" \t{")
  if (name === "") throw new Unreadable("no metric name")
  const labels: Array<readonly [string, string]> = []
  if (line[at] === "{") {
    at++
    skipBlanks()
    while (line[at] !== "}") {
      const label = token(' \t=,}"')
      if (label === "") throw new Unreadable(`expected a label name in ${name}`)
      skipBlanks()
      if (line[at] !== "=") throw new Unreadable(`expected = after label ${label}`)
      at++
      skipBlanks()
      if (line[at] !== '"') throw new Unreadable(`expected " to open the value of label ${label}`)
      at++
      const start = at
      while (at < line.length && line[at] !== '"') at += line[at] === "\\" ? 2 : 1
      if (at >= line.length) throw new Unreadable(`unterminated value of label ${label}`)
      labels.push([label, unescapeText(line.slice(start, at), true, `the value of label ${label}`)])
      at++
      skipBlanks()
      if (line[at] === ",") {
        at++
        skipBlanks()
      } else if (line[at] !== "}") throw new Unreadable(`expected , or } after label ${label}`)
    }
    at++
  }
  skipBlanks()
  const valueToken = token(" \t")
  if (valueToken === "") throw new Unreadable(`no value for ${name}`)
  const parsed = toNumber(valueToken)
  if (parsed === undefined) throw new Unreadable(`value ${valueToken} is not a number`)
  skipBlanks()
  const timestamp = token(" \t")
  if (timestamp !== "" && !TIMESTAMP.test(timestamp)) throw new Unreadable(`timestamp ${timestamp} is not an integer`)
  skipBlanks()
  if (at < line.length) throw new Unreadable(`unexpected ${line.slice(at)} after the timestamp`)
  return { name, labels, value: parsed }
}

const scan = (text: string): { families: ReadonlyArray<Scanned>; problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const families = new Map<string, Scanned>()
  // A family's lines must form one group: once another family's line comes, it is closed.
  const closed = new Set<Scanned>()
  let current: Scanned | undefined
  const firstSampleLine = new Map<string, number>()
  const seriesLine = new Map<string, number>()
  const lines = text.split("\n")
  if (text.endsWith("\n")) lines.pop()

  const familyNamed = (name: string) => {
    let family = families.get(name)
    if (family === undefined) {
      family = { name, type: undefined, typeLine: undefined, help: undefined, helpLine: undefined, samples: [] }
      families.set(name, family)
    }
    return family
  }

  const enter = (family: Scanned, line: number) => {
    if (family === current) return
    if (current !== undefined) closed.add(current)
    if (closed.has(family)) problems.push(`line ${line}: metric ${family.name} continues after another metric's lines`)
    current = family
  }

  /** The family a sample belongs to: the current typed one when the name extends it, else the one owning the name. */
  const ownerOf = (name: string) => {
    if (current?.type !== undefined && (name === current.name || name.startsWith(`${current.name}_`))) return current
    for (const family of families.values()) if (sampleNames(family.name, family.type).includes(name)) return family
    return familyNamed(name)
  }

  const checkName = (name: string, line: number) => {
    if (!METRIC_NAME.test(name)) problems.push(`line ${line}: invalid metric name ${name}`)
  }

  const comment = (line: string, number: number) => {
    const match = /^#[ \t]*(HELP|TYPE)(?:[ \t]+(.*))?$/.exec(line)
    if (match === null) return
    const [, keyword, rest = ""] = match
    if (keyword === "HELP") {
      const [, name = "", docstring = ""] = /^(\S*)(?:[ \t]+(.*))?$/.exec(rest)!
      if (name === "") throw new Unreadable("HELP without a metric name")
      const help = unescapeText(docstring, false, `the HELP of ${name}`)
      checkName(name, number)
      const family = familyNamed(name)
      enter(family, number)
      if (family.helpLine !== undefined) {
        problems.push(`line ${number}: HELP for ${name} repeats line ${family.helpLine}`)
        return
      }
      family.help = help
      family.helpLine = number
      return
    }
    const tokens = rest.split(/[ \t]+/).filter((token) => token !== "")
    if (tokens.length !== 2) throw new Unreadable("TYPE needs a metric name and a type")
    const [name, type] = tokens as [string, string]
    if (!TYPES.includes(type)) {
      problems.push(`line ${number}: unknown type ${type} for ${name}`)
      return
    }
    checkName(name, number)
    const family = familyNamed(name)
    enter(family, number)
    if (family.typeLine !== undefined) {
      problems.push(`line ${number}: TYPE for ${name} repeats line ${family.typeLine}`)
      return
    }
    const seen = sampleNames(name, type as Type).flatMap((sampleName) => firstSampleLine.get(sampleName) ?? [])
    if (seen.length > 0)
      problems.push(`line ${number}: TYPE for ${name} comes after its sample on line ${Math.min(...seen)}`)
    family.type = type as Type
    family.typeLine = number
  }

  const sample = (line: string, number: number) => {
    const read = readSample(line)
    checkName(read.name, number)
    const labels: Record<string, string> = {}
    for (const [label, text] of read.labels) {
      if (!LABEL_NAME.test(label)) problems.push(`line ${number}: invalid label name ${label}`)
      else if (label.startsWith("__")) problems.push(`line ${number}: label name ${label} is reserved`)
      if (Object.hasOwn(labels, label)) problems.push(`line ${number}: label ${label} repeated`)
      else labels[label] = text
    }
    const key = sortedKey(read.name, labels)
    const repeats = seriesLine.get(key)
    if (repeats !== undefined)
      problems.push(`line ${number}: series ${series(read.name, labels)} repeats line ${repeats}`)
    else seriesLine.set(key, number)
    if (!firstSampleLine.has(read.name)) firstSampleLine.set(read.name, number)
    const family = ownerOf(read.name)
    enter(family, number)
    if (!sampleNames(family.name, family.type).includes(read.name))
      problems.push(`line ${number}: sample ${read.name} does not belong to ${family.type ?? "untyped"} ${family.name}`)
    family.samples.push({ name: read.name, labels, value: read.value, line: number })
  }

  lines.forEach((raw, index) => {
    const number = index + 1
    const line = raw.replace(/^[ \t]+/, "")
    if (line.trim() === "") return
    try {
      if (line.startsWith("#")) comment(line, number)
      else sample(line, number)
    } catch (error) {
      if (!(error instanceof Unreadable)) throw error
      problems.push(`line ${number}: cannot parse: ${error.reason}`)
    }
  })

  for (const family of families.values()) {
    if (family.typeLine === undefined) problems.push(`metric ${family.name} has no TYPE`)
    if (family.helpLine === undefined) problems.push(`metric ${family.name} has no HELP`)
    if (family.type === "counter" && !family.name.endsWith("_total"))
      problems.push(`metric ${family.name} is a counter but its name does not end with _total`)
    if (family.type === "histogram") problems.push(...histogramProblems(family))
  }
  if (text !== "" && !text.endsWith("\n")) problems.push(`line ${lines.length}: the text does not end with a newline`)
  return { families: [...families.values()], problems }
}

/** Per label set (without `le`): buckets cumulative, a +Inf bucket equal to `_count`, `_sum` and `_count` present. */
const histogramProblems = (family: Scanned): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const groups = new Map<
    string,
    {
      readonly labels: Record<string, string>
      readonly buckets: Array<{ readonly le: string; readonly bound: number; readonly value: number }>
      sum: number | undefined
      count: number | undefined
    }
  >()
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels
    const key = sortedKey(family.name, rest)
    let group = groups.get(key)
    if (group === undefined) {
      group = { labels: rest, buckets: [], sum: undefined, count: undefined }
      groups.set(key, group)
    }
    if (sample.name === `${family.name}_sum`) group.sum = sample.value
    else if (sample.name === `${family.name}_count`) group.count = sample.value
    else if (sample.name === `${family.name}_bucket`) {
      const bound = le === undefined ? undefined : toNumber(le)
      if (le === undefined) problems.push(`line ${sample.line}: bucket ${sample.name} has no le label`)
      else if (bound === undefined || Number.isNaN(bound))
        problems.push(`line ${sample.line}: le="${escapeValue(le)}" of ${sample.name} is not a number`)
      else group.buckets.push({ le, bound, value: sample.value })
    }
  }
  for (const group of groups.values()) {
    const name = `metric ${series(family.name, group.labels)}`
    const buckets = [...group.buckets].sort((a, b) => a.bound - b.bound)
    buckets.forEach((bucket, index) => {
      const below = buckets[index - 1]
      if (below !== undefined && bucket.value < below.value)
        problems.push(
          `${name}: bucket le="${bucket.le}" has ${bucket.value}, less than ${below.value} at le="${below.le}"`
        )
    })
    const infinite = buckets.find((bucket) => bucket.bound === Number.POSITIVE_INFINITY)
    if (infinite === undefined) problems.push(`${name}: no le="+Inf" bucket`)
    if (group.sum === undefined) problems.push(`${name}: no ${family.name}_sum`)
    if (group.count === undefined) problems.push(`${name}: no ${family.name}_count`)
    if (infinite !== undefined && group.count !== undefined && infinite.value !== group.count)
      problems.push(`${name}: le="+Inf" bucket has ${infinite.value} but ${family.name}_count is ${group.count}`)
  }
  return problems
}
