import { Config, Console, Effect, Option, Schema } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { MemberRole, PlanId } from "@leadline/core/accounts/Account"
import { CreatedAccount, CreatedKey, CreatedUser } from "@leadline/core/admin/Operator"
import { KeySummary, RevokedKey } from "@leadline/core/auth/ApiKey"
import { describe } from "./ErrorText.ts"
import * as HumanOutput from "./HumanOutput.ts"
import * as LeadImport from "./LeadImport.ts"
import * as OperatorClient from "./OperatorClient.ts"

/** The `leadline` command tree: running the server, and the operator API for people and scripts. */

const url = Flag.String("url").pipe(
  Flag.withDescription(`The server's base URL (default: $LEADLINE_URL, else ${OperatorClient.DEFAULT_URL})`),
  Flag.withFallbackConfig(Config.String("LEADLINE_URL")),
  Flag.withDefault(OperatorClient.DEFAULT_URL)
)

const json = Flag.Boolean("json").pipe(
  Flag.withDescription("Print the server's JSON answer exactly as it came"),
  Flag.withDefault(false)
)

const account = Flag.String("account").pipe(Flag.withDescription("The account's id"))

const scopes = Flag.String("scope").pipe(
  Flag.withDescription("A scope to grant, such as leads:read; repeat for several"),
  Flag.atLeast(0)
)

interface Remote {
  readonly url: string
  readonly json: boolean
}

/** One operator call: the raw answer with `--json`, else the rendered one; failures become messages. */
const call = <A>(
  remote: Remote,
  request: OperatorClient.Request,
  schema: Schema.Decoder<A>,
  render: (answer: A) => string
) =>
  Effect.gen(function* () {
    const answer = yield* OperatorClient.send(yield* OperatorClient.target(remote.url), request)
    if (remote.json) return yield* Console.log(answer.text)
    const decoded = yield* Schema.decodeUnknownEffect(schema)(answer.body).pipe(
      Effect.mapError(
        (issue) =>
          new CliError.UserError({
            cause: issue,
            userMessage: `The server's answer has an unexpected shape: ${issue.message}`
          })
      )
    )
    yield* Console.log(render(decoded))
  }).pipe(Effect.mapError(toUserError))

const toUserError = (error: OperatorClient.OperatorError | Config.ConfigError | CliError.UserError) => {
  if (error instanceof CliError.UserError) return error
  return new CliError.UserError({ cause: error, userMessage: explain(error) })
}

const explain = (error: OperatorClient.OperatorError | Config.ConfigError): string => {
  switch (error._tag) {
    case "MissingAdminToken":
      return `No admin token: ${error.reason}. Looked in LEADLINE_ADMIN_TOKEN, then ${error.file} (from LEADLINE_DATA_DIR, default ./data).`
    case "InvalidUrl":
      return `Not an http(s) URL: ${error.url}. Pass --url http://host:port or set LEADLINE_URL.`
    case "ServerUnreachable":
      return `Could not reach the Leadline server at ${error.url}: ${error.reason}. Is it running? Point --url or LEADLINE_URL at it.`
    case "UnexpectedAnswer":
      return `${error.url} answered HTTP ${error.status} but ${error.reason}: is it a Leadline server?`
    case "ServerError": {
      const refused =
        error.code === "unauthorized" ? ` (the server refused the admin token from ${error.tokenSource})` : ""
      // `error` already repeats the first detail; list only what it does not say.
      const details = error.details
        .filter((detail) => !error.error.includes(detail.message))
        .map((detail) => `\n  ${detail.path}: ${detail.message}`)
        .join("")
      return `The server answered ${error.status} ${error.code}: ${error.error}${refused}${details}`
    }
    default:
      return `Bad configuration: ${error.message}`
  }
}

const path = (...segments: ReadonlyArray<string>) => segments.map(encodeURIComponent).join("/")

const accountsCreate = Command.make(
  "create",
  {
    url,
    json,
    name: Flag.String("name").pipe(Flag.withDescription("The account's name")),
    plan: Flag.Literals("plan", PlanId.literals).pipe(
      Flag.withDescription("The plan (the server's default: free)"),
      Flag.optional
    )
  },
  ({ name, plan, ...remote }) =>
    call(
      remote,
      {
        method: "POST",
        path: "/admin/v1/accounts",
        body: { name, ...Option.match(plan, { onNone: () => ({}), onSome: (plan_id) => ({ plan_id }) }) }
      },
      CreatedAccount,
      HumanOutput.createdAccount
    )
).pipe(Command.withDescription("Create an account with its owner and the owner's full-access API key"))

const usersCreate = Command.make(
  "create",
  {
    url,
    json,
    account,
    role: Flag.Literals("role", MemberRole.literals).pipe(Flag.withDescription("The user's role"))
  },
  ({ account, role, ...remote }) =>
    call(
      remote,
      { method: "POST", path: `/admin/v1/accounts/${path(account, "users")}`, body: { role } },
      CreatedUser,
      (answer) => HumanOutput.createdUser(account, answer)
    )
).pipe(Command.withDescription("Add a user to an account"))

const keysCreate = Command.make(
  "create",
  {
    url,
    json,
    account,
    name: Flag.String("name").pipe(Flag.withDescription("A label for the key"), Flag.optional),
    scopes,
    user: Flag.String("user").pipe(Flag.withDescription("The user the key acts as (default: the owner)"), Flag.optional)
  },
  ({ account, name, scopes, user, ...remote }) =>
    call(
      remote,
      {
        method: "POST",
        path: `/admin/v1/accounts/${path(account, "keys")}`,
        body: {
          ...Option.match(name, { onNone: () => ({}), onSome: (name) => ({ name }) }),
          ...(scopes.length === 0 ? {} : { scopes }),
          ...Option.match(user, { onNone: () => ({}), onSome: (user_id) => ({ user_id }) })
        }
      },
      CreatedKey,
      (answer) => HumanOutput.createdKey(account, answer)
    )
).pipe(Command.withDescription("Issue an API key; without --scope it has full access"))

const keysList = Command.make("list", { url, json, account }, ({ account, ...remote }) =>
  call(
    remote,
    { method: "GET", path: `/admin/v1/accounts/${path(account, "keys")}` },
    Schema.Struct({ keys: Schema.Array(KeySummary) }),
    (answer) => HumanOutput.keyList(account, answer.keys)
  )
).pipe(Command.withDescription("List an account's API keys (never the keys themselves)"))

const keyId = Argument.String("key_id").pipe(Argument.withDescription("The key's id (key_…)"))

const keysRevoke = Command.make("revoke", { url, json, keyId }, ({ keyId, ...remote }) =>
  call(remote, { method: "DELETE", path: `/admin/v1/keys/${path(keyId)}` }, RevokedKey, HumanOutput.revoked)
).pipe(Command.withDescription("Revoke a key: it gets 401 from its next request on"))

const keysSetScopes = Command.make(
  "set-scopes",
  {
    url,
    json,
    keyId,
    scopes,
    fullAccess: Flag.Boolean("full-access").pipe(
      Flag.withDescription("Remove every scope: the key gets full access"),
      Flag.withDefault(false)
    )
  },
  ({ keyId, scopes, ...remote }) =>
    call(
      remote,
      { method: "PATCH", path: `/admin/v1/keys/${path(keyId)}`, body: { scopes } },
      KeySummary,
      HumanOutput.scopesSet
    )
).pipe(
  // An empty scope list means full access, so it must be asked for, never reached by forgetting --scope.
  Command.validate(({ scopes, fullAccess }) =>
    scopes.length === 0 && !fullAccess
      ? Effect.fail(new CliError.ValidationError({ message: "Give at least one --scope, or --full-access" }))
      : scopes.length > 0 && fullAccess
        ? Effect.fail(new CliError.ValidationError({ message: "--scope and --full-access exclude each other" }))
        : Effect.void
  ),
  Command.withDescription("Replace a key's scopes; takes effect on its next request")
)

const leadsImport = Command.make(
  "import",
  {
    url,
    json,
    account,
    file: Argument.String("file").pipe(Argument.withDescription("A CSV (with a header row) or NDJSON file")),
    format: Flag.Literals("format", ["csv", "ndjson"] as const).pipe(
      Flag.withDescription("The file's format (default: ndjson for .ndjson and .jsonl files, else csv)"),
      Flag.optional
    ),
    mapping: Flag.String("mapping").pipe(
      Flag.withDescription('Lead field to column, as JSON: {"name":"Full Name","phone":"Mobile"}'),
      Flag.optional
    ),
    dryRun: Flag.Boolean("dry-run").pipe(
      Flag.withDescription("Check and count every row, write nothing"),
      Flag.withDefault(false)
    ),
    onConflict: Flag.Literals("on-conflict", ["update", "skip"] as const).pipe(
      Flag.withDescription("A row whose phone is a lead's already: update it (the default) or skip it"),
      Flag.optional
    ),
    key: Flag.Redacted("key").pipe(
      Flag.withDescription(
        "An API key of the account with leads:write (default: $LEADLINE_API_KEY, else one issued for the import and revoked after)"
      ),
      Flag.withFallbackConfig(Config.Redacted("LEADLINE_API_KEY")),
      Flag.optional
    )
  },
  ({ url, ...options }) =>
    Effect.gen(function* () {
      yield* LeadImport.run({ ...options, target: yield* OperatorClient.target(url) })
    }).pipe(Effect.mapError(toUserError))
).pipe(
  Command.withDescription(
    "Import leads from a file into an account (POST /api/v1/leads/imports) and follow the job to its end"
  )
)

// The server and migrations load on demand: operator commands then start in half the time.
const serveCommand = Command.make("serve", {}, () =>
  Effect.flatMap(
    Effect.promise(() => import("../Serve.ts")),
    (module) => module.serve
  )
).pipe(Command.withDescription("Run the API server (configured from the environment, see the README)"))

const workerCommand = Command.make("worker", {}, () =>
  Effect.flatMap(
    Effect.promise(() => import("../Work.ts")),
    (module) => module.work
  )
).pipe(
  Command.withDescription(
    "Run the webhook delivery worker alone (on DATABASE_URL; the server runs one too unless WEBHOOK_WORKER_ENABLED=false)"
  )
)

const migrateCommand = Command.make("migrate", { json }, ({ json }) =>
  Effect.gen(function* () {
    const { migrate } = yield* Effect.promise(() => import("../Migrate.ts"))
    const applied = yield* migrate.pipe(
      Effect.mapError((cause) => new CliError.UserError({ cause, userMessage: `Migration failed: ${describe(cause)}` }))
    )
    yield* Console.log(
      json ? JSON.stringify(applied.map(([id, name]) => ({ id, name }))) : HumanOutput.migrations(applied)
    )
  })
).pipe(Command.withDescription("Apply the database migrations and print the ones applied"))

const newKey = Command.make(
  "new-key",
  {
    id: Flag.String("id").pipe(
      Flag.withDescription("The key's id in the keyring (default: k and today's date, e.g. k20260101)"),
      Flag.optional
    )
  },
  ({ id }) =>
    Effect.gen(function* () {
      const { newKey } = yield* Effect.promise(() => import("@leadline/sql-adapter/sealing/Keyring"))
      const chosen = Option.getOrElse(id, () => `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}`)
      const entry = yield* Effect.try({
        try: () => newKey(chosen),
        catch: (cause) => new CliError.UserError({ cause, userMessage: (cause as Error).message })
      })
      yield* Console.log(entry)
    })
).pipe(
  Command.withDescription(
    "Print a new key for LEADLINE_ENCRYPTION_KEY (id:base64); put it first in the keyring to seal with it"
  )
)

const reseal = Command.make("reseal", { json }, ({ json }) =>
  Effect.gen(function* () {
    const { reseal } = yield* Effect.promise(() => import("../Secrets.ts"))
    const report = yield* reseal.pipe(
      Effect.mapError((cause) => new CliError.UserError({ cause, userMessage: `Reseal failed: ${describe(cause)}` }))
    )
    yield* Console.log(json ? JSON.stringify(report) : HumanOutput.resealed(report))
    const failed = report.flatMap((column) => column.failed)
    if (failed.length > 0) {
      return yield* new CliError.UserError({
        cause: failed,
        userMessage: `${failed.length} value(s) did not open and were left as they are: ${failed.join(", ")}`
      })
    }
  })
).pipe(
  Command.withDescription(
    "Seal every provider secret under LEADLINE_ENCRYPTION_KEY's first key (unsealed ones too), in batches; servers may run"
  )
)

export const leadline = Command.make("leadline").pipe(
  Command.withDescription("Leadline's server and operator tool"),
  Command.withSubcommands([
    serveCommand,
    workerCommand,
    migrateCommand,
    Command.make("accounts").pipe(
      Command.withDescription("Accounts (operator API)"),
      Command.withSubcommands([accountsCreate])
    ),
    Command.make("users").pipe(
      Command.withDescription("Users of an account (operator API)"),
      Command.withSubcommands([usersCreate])
    ),
    Command.make("keys").pipe(
      Command.withDescription("API keys (operator API)"),
      Command.withSubcommands([keysCreate, keysList, keysRevoke, keysSetScopes])
    ),
    Command.make("leads").pipe(Command.withDescription("An account's leads"), Command.withSubcommands([leadsImport])),
    Command.make("secrets").pipe(
      Command.withDescription("The keyring that seals provider secrets at rest (LEADLINE_ENCRYPTION_KEY)"),
      Command.withSubcommands([newKey, reseal])
    )
  ])
)
