import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  AccountDetail,
  AccountList,
  CreateAccount,
  CreatedAccount,
  CreatedKey,
  CreatedUser,
  CreateKey,
  CreateUser,
  AccountPlan,
  SetPlan
} from "@leadline/core/admin/Operator"
import { KeySummary, RevokedKey, SetScopes } from "@leadline/core/auth/ApiKey"
import { PageQueryFields } from "@leadline/core/Pagination"
import { Id } from "@leadline/core/Text"
import { RequestErrors } from "../RequestErrors.ts"
import { NotFound } from "../WireErrors.ts"
import { AdminAuthentication } from "./AdminAuthentication.ts"

const AccountId = { account_id: Id }

const bounded = (max: number) => Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max))

const SimulatedCustomer = Schema.Struct({
  phone_number_id: Id.annotate({ description: "The channel's number at Meta" }),
  from: Id.annotate({ description: "The customer's WhatsApp number: digits as Meta sends them, or E.164" }),
  name: Schema.optional(Schema.NullOr(Schema.String)),
  text: Schema.optional(bounded(4096)),
  button_reply: Schema.optional(
    Schema.Struct({ id: bounded(256), title: bounded(20) }).annotate({
      description: "The customer taps a reply button of the message `reply_to`"
    })
  ),
  list_reply: Schema.optional(
    Schema.Struct({ id: bounded(200), title: bounded(24), description: Schema.optional(bounded(72)) }).annotate({
      description: "The customer picks a row of the list message `reply_to`"
    })
  ),
  reply_to: Schema.optional(
    Id.annotate({ description: "The outbound message (`msg_…`) answered: WhatsApp's `context`" })
  )
})
  .check(
    Schema.makeFilter((body) => {
      const given = (["text", "button_reply", "list_reply"] as const).filter((field) => body[field] !== undefined)
      if (given.length === 0) return { path: ["text"], issue: "one of text, button_reply or list_reply is required" }
      if (given.length > 1) return { path: [given[1]!], issue: `only one of text, button_reply or list_reply` }
      if (given[0] !== "text" && body.reply_to === undefined) {
        return { path: ["reply_to"], issue: `${given[0]} answers a message: reply_to is required` }
      }
      return true
    })
  )
  .annotate({ identifier: "SimulatedCustomer" })
const SimulatedQuality = Schema.Struct({
  business_account_id: Id.annotate({ description: "The channel's `business_account_id`: Meta routes these by it" }),
  display_phone_number: Id.annotate({ description: "The channel's number: digits or E.164" }),
  event: Schema.Literals(["FLAGGED", "UNFLAGGED", "UPGRADE", "DOWNGRADE"]),
  current_limit: Schema.optional(
    Schema.Literals(["TIER_50", "TIER_250", "TIER_1K", "TIER_10K", "TIER_100K", "TIER_UNLIMITED"])
  ).annotate({ description: "The number's messaging limit after the event (default `TIER_1K`)" })
}).annotate({ identifier: "SimulatedNumberQuality" })

const KeyId = { key_id: Id }

export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createAccount", "/accounts", {
      payload: CreateAccount,
      success: CreatedAccount.pipe(HttpApiSchema.status(201))
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Create an account",
        description: "Makes the account, its owner user and a full-access key of the owner. The key is shown only here."
      })
    ),
    HttpApiEndpoint.get("listAccounts", "/accounts", {
      query: PageQueryFields,
      success: AccountList
    }).annotateMerge(
      OpenApi.annotations({
        summary: "List accounts",
        description: "Every account with its plan and owner, newest first (`created_at` desc, then `id` desc)."
      })
    ),
    HttpApiEndpoint.get("getAccount", "/accounts/:account_id", {
      params: AccountId,
      success: AccountDetail,
      error: NotFound
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get an account",
        description:
          "The account with its users (oldest first, the owner leading) and this month's usage, as `GET /api/usage` reports it to the account."
      })
    ),
    HttpApiEndpoint.post("createUser", "/accounts/:account_id/users", {
      params: AccountId,
      payload: CreateUser,
      success: CreatedUser.pipe(HttpApiSchema.status(201)),
      error: NotFound
    }).annotateMerge(OpenApi.annotations({ summary: "Add a user to an account" })),
    HttpApiEndpoint.post("createKey", "/accounts/:account_id/keys", {
      params: AccountId,
      payload: CreateKey,
      success: CreatedKey.pipe(HttpApiSchema.status(201)),
      error: NotFound
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Issue an API key",
        description: "No scopes means full access. `user_id` defaults to the owner. The key is shown only here."
      })
    ),
    HttpApiEndpoint.get("listKeys", "/accounts/:account_id/keys", {
      params: AccountId,
      success: Schema.Struct({ keys: Schema.Array(KeySummary) }),
      error: NotFound
    }).annotateMerge(OpenApi.annotations({ summary: "List an account's API keys (never the keys themselves)" })),
    HttpApiEndpoint.patch("setScopes", "/keys/:key_id", {
      params: KeyId,
      payload: SetScopes,
      success: KeySummary,
      error: NotFound
    }).annotateMerge(
      OpenApi.annotations({ summary: "Change a key's scopes", description: "Takes effect on the key's next request." })
    ),
    HttpApiEndpoint.patch("setPlan", "/accounts/:account_id", {
      params: AccountId,
      payload: SetPlan,
      success: AccountPlan,
      error: NotFound
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change an account's plan",
        description: "The new monthly message limit holds from the next send on."
      })
    ),
    HttpApiEndpoint.post("simulateCustomer", "/simulator/whatsapp/inbound", {
      payload: SimulatedCustomer,
      success: Schema.Struct({ external_id: Schema.String }).pipe(HttpApiSchema.status(202)),
      error: NotFound
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Play a customer writing in (simulator only)",
        description:
          "Signs a WhatsApp text message, or a button or list reply to `reply_to`, as Meta would and posts it through the real inbound webhook. Exists only with `WHATSAPP_TRANSPORT=simulator` (404 otherwise)."
      })
    ),
    HttpApiEndpoint.post("simulateNumberQuality", "/simulator/whatsapp/quality", {
      payload: SimulatedQuality,
      success: Schema.Struct({}).pipe(HttpApiSchema.status(202)),
      error: NotFound
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Play Meta rating a number (simulator only)",
        description:
          "Signs a `phone_number_quality_update` webhook as Meta would and posts it through the real inbound webhook: `FLAGGED` makes the channel `red` and holds its campaigns, `UNFLAGGED` releases them. Exists only with `WHATSAPP_TRANSPORT=simulator` (404 otherwise)."
      })
    ),
    HttpApiEndpoint.delete("revokeKey", "/keys/:key_id", {
      params: KeyId,
      success: RevokedKey,
      error: NotFound
    }).annotateMerge(OpenApi.annotations({ summary: "Revoke a key", description: "The key gets 401 from then on." }))
  )
  .middleware(RequestErrors)
  .middleware(AdminAuthentication)
  .prefix("/admin/v1")
  .annotateMerge(
    OpenApi.annotations({
      title: "Operator",
      description:
        "Accounts, users, plans and API keys, for the platform operator. Keep `/admin` off the public network."
    })
  ) {}
