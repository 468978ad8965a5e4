import { readFileSync } from "node:fs"
import { extname } from "node:path"
import { Console, Effect, Option, Redacted, Schema } from "effect"
import { CliError } from "effect/cli"
import { CreatedKey } from "@leadline/core/admin/Operator"
import { LeadJob } from "@leadline/core/leads/LeadJob"
import { describe } from "./ErrorText.ts"
import * as OperatorClient from "./OperatorClient.ts"

/**
 * `leadline leads import FILE --account …`: uploads a CSV or NDJSON file to `POST /api/v1/leads/imports`
 * and follows its job to the end, with a progress bar on a terminal and a line per change otherwise.
 * The import is the account's, so it needs one of its keys: `--key` (or `LEADLINE_API_KEY`), else the
 * operator issues a `leads:write` key for the upload and revokes it when done.
 */

export interface Options {
  readonly target: OperatorClient.Target
  readonly account: string
  readonly file: string
  readonly format: Option.Option<"csv" | "ndjson">
  readonly mapping: Option.Option<string>
  readonly dryRun: boolean
  readonly onConflict: Option.Option<"update" | "skip">
  readonly key: Option.Option<Redacted.Redacted<string>>
  readonly json: boolean
}

const POLL_MILLIS = 500
const SHOWN_ERRORS = 10

const decodeJob = Schema.decodeUnknownEffect(LeadJob)

const formatOf = (file: string, given: Option.Option<"csv" | "ndjson">): "csv" | "ndjson" =>
  Option.getOrElse(given, () => ([".ndjson", ".jsonl"].includes(extname(file).toLowerCase()) ? "ndjson" : "csv"))

const unexpected = (cause: unknown) =>
  new CliError.UserError({ cause, userMessage: `The server's answer has an unexpected shape: ${describe(cause)}` })

const counted = (job: LeadJob) => {
  const { read, created, updated, unchanged, failed } = job.counts
  return `${read}/${job.total_rows ?? "?"} rows: ${created} created, ${updated} updated, ${unchanged} unchanged, ${failed} failed`
}

/** `[#####-----]  45% 450/1000 rows: …`, the width of a terminal line at most. */
export const bar = (job: LeadJob, width = 30): string => {
  const total = job.total_rows ?? 0
  const share = total === 0 ? 1 : Math.min(1, job.counts.read / total)
  const filled = Math.round(share * width)
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${counted(job)}`
}

/** The job's end: its counts and its first refused rows. */
export const summary = (job: LeadJob): string => {
  const lines = [
    `Import ${job.id} ${job.state}${job.dry_run ? " (dry run: nothing written)" : ""}: ${counted(job)}`,
    ...(job.failure === null ? [] : [`  ${job.failure}`]),
    ...job.errors
      .slice(0, SHOWN_ERRORS)
      .map((error) => `  row ${error.row ?? "?"}${error.field === null ? "" : ` ${error.field}`}: ${error.reason}`)
  ]
  const more = job.counts.failed - Math.min(job.errors.length, SHOWN_ERRORS)
  if (more > 0) lines.push(`  … ${more} more refused rows: GET /api/v1/leads/jobs/${job.id}`)
  return lines.join("\n")
}

/** A key of the account for the upload: the one given, else a `leads:write` key issued now and revoked after. */
const withKey = <A, E>(options: Options, use: (key: Redacted.Redacted<string>) => Effect.Effect<A, E>) =>
  Option.match(options.key, {
    onSome: use,
    onNone: () =>
      Effect.acquireUseRelease(
        OperatorClient.send(options.target, {
          method: "POST",
          path: `/admin/v1/accounts/${encodeURIComponent(options.account)}/keys`,
          body: { name: "leadline leads import", scopes: ["leads:write"] }
        }).pipe(
          Effect.flatMap((answer) => Effect.mapError(Schema.decodeUnknownEffect(CreatedKey)(answer.body), unexpected))
        ),
        (created) => use(Redacted.make(created.api_key)),
        (created) =>
          OperatorClient.send(options.target, {
            method: "DELETE",
            path: `/admin/v1/keys/${encodeURIComponent(created.id)}`
          }).pipe(Effect.ignore)
      )
  })

export const run = (options: Options) =>
  Effect.gen(function* () {
    const format = formatOf(options.file, options.format)
    const body = yield* Effect.try({
      try: () => readFileSync(options.file, "utf8"),
      catch: (cause) =>
        new CliError.UserError({ cause, userMessage: `Could not read ${options.file}: ${describe(cause)}` })
    })
    const query = new URLSearchParams()
    Option.map(options.mapping, (mapping) => query.set("mapping", mapping))
    if (options.dryRun) query.set("dry_run", "true")
    Option.map(options.onConflict, (onConflict) => query.set("on_conflict", onConflict))
    const tty = process.stdout.isTTY === true && !options.json

    return yield* withKey(options, (apiKey) =>
      Effect.gen(function* () {
        const started = yield* OperatorClient.send(options.target, {
          method: "POST",
          path: `/api/v1/leads/imports${query.size === 0 ? "" : `?${query}`}`,
          raw: { body, contentType: format === "csv" ? "text/csv" : "application/x-ndjson" },
          apiKey
        })
        let job = yield* Effect.mapError(decodeJob(started.body), unexpected)
        let text = started.text
        let shown = ""
        if (!options.json) yield* Console.log(`Uploaded ${options.file}: job ${job.id}`)
        while (job.state === "queued" || job.state === "running") {
          yield* Effect.sleep(POLL_MILLIS)
          const answer = yield* OperatorClient.send(options.target, {
            method: "GET",
            path: `/api/v1/leads/jobs/${encodeURIComponent(job.id)}`,
            apiKey
          })
          job = yield* Effect.mapError(decodeJob(answer.body), unexpected)
          text = answer.text
          if (options.json) continue
          const line = tty ? bar(job) : counted(job)
          if (line === shown) continue
          shown = line
          // On a terminal the bar redraws in place; piped, each change is a line of its own.
          if (tty) process.stdout.write(`\r${line}`)
          else yield* Console.log(line)
        }
        if (tty && shown !== "") process.stdout.write("\n")
        yield* Console.log(options.json ? text : summary(job))
        if (job.state === "failed") {
          return yield* new CliError.UserError({ cause: job, userMessage: `The import failed: ${job.failure}` })
        }
        return job
      })
    )
  })
