import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ConfigureOptOuts, OptOutSettings } from "@leadline/core/optouts/OptOutSettings"
import { Authentication } from "../Authentication.ts"
import { RequestErrors } from "../RequestErrors.ts"
import { Forbidden, ValidationError } from "../WireErrors.ts"

const WHAT =
  "An inbound WhatsApp text that is, as a whole, one of `opt_out_keywords` (compared without case, surrounding spaces or punctuation) sets its lead's `marketing_opt_out`; one of `opt_in_keywords` clears it. Campaigns skip opted-out leads (recipient `skipped`, `opted_out`); replies in a conversation still go. `opt_out_reply` and `opt_in_reply`, when set, are sent to the lead as a text (`sender_type: system`) when its opt-out changes by keyword."

export class OptOutsApi extends HttpApiGroup.make("optOuts")
  .add(
    HttpApiEndpoint.get("get", "/", {
      success: OptOutSettings,
      error: [Forbidden]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Get the opt-out keywords",
        description: `The defaults (STOP, UNSUBSCRIBE, PARAR, BAJA, … and START to come back; no replies) until set. ${WHAT} Needs \`leads:read\` or \`leads:write\`.`
      })
    ),
    HttpApiEndpoint.patch("update", "/", {
      payload: ConfigureOptOuts,
      success: OptOutSettings,
      error: [Forbidden, ValidationError]
    }).annotateMerge(
      OpenApi.annotations({
        summary: "Change the opt-out keywords and confirmations",
        description: `Changes the fields given (a list replaces the list; a reply of \`null\` sends none) and answers the whole setting, keywords in capitals. A keyword in both lists is a 400. ${WHAT} Needs a full-access key.`
      })
    )
  )
  .middleware(RequestErrors)
  .middleware(Authentication)
  .prefix("/api/v1/settings/opt-outs")
  .annotateMerge(
    OpenApi.annotations({
      title: "Opt-outs",
      description: "Marketing opt-outs by WhatsApp keyword, per account (on by default, with common keywords)."
    })
  ) {}
