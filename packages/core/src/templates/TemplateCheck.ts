import { Effect } from "effect"
import type { Channel } from "../channels/Channel.ts"
import { invalidField, type InvalidInput } from "../Errors.ts"
import { givenCounts, type MessageTemplate, parameterCounts } from "./Template.ts"
import type { TemplatesRepo } from "./TemplatesRepo.ts"

/** A template as a send or a campaign names it. */
export interface Named {
  readonly name: string
  readonly language: string
  readonly components?: ReadonlyArray<unknown> | undefined
}

/**
 * Whether a send or a campaign may name this template on this channel (docs/contract-messaging.md
 * §8.7): it exists in the WABA in that language, is APPROVED, and gets as many body and header
 * parameters as it takes. The answer is the stored template (its category decides the opt-out
 * rule), or undefined when the channel's WABA has no list to judge by: no `business_account_id`,
 * never synced, or synced empty. Then Meta judges, as before templates were synced (132000, 132001).
 */
export const check = (
  repo: TemplatesRepo["Service"],
  accountId: string,
  channel: Channel,
  template: Named,
  field = "template"
): Effect.Effect<MessageTemplate | undefined, InvalidInput> =>
  Effect.gen(function* () {
    const waba = channel.business_account_id
    if (waba === null) return undefined
    const known = yield* repo.ofBusinessAccount(accountId, waba)
    if (known.syncedAt === null || known.templates.length === 0) return undefined
    const named = known.templates.filter((candidate) => candidate.name === template.name)
    if (named.length === 0) {
      return yield* invalidField(`${field}.name`, `no template named ${template.name} in business account ${waba}`)
    }
    const stored = named.find((candidate) => candidate.language === template.language)
    if (stored === undefined) {
      const languages = named.map((candidate) => candidate.language).sort()
      return yield* invalidField(
        `${field}.language`,
        `${template.name} has no ${template.language} version (it has ${languages.join(", ")})`
      )
    }
    if (stored.status !== "APPROVED") {
      return yield* invalidField(
        `${field}.name`,
        `${template.name} (${template.language}) is ${stored.status}, not APPROVED`
      )
    }
    const takes = parameterCounts(stored.components)
    const given = givenCounts(template.components ?? [])
    for (const part of ["header", "body"] as const) {
      if (takes[part] !== given[part]) {
        return yield* invalidField(
          `${field}.components`,
          `${template.name} (${template.language}) takes ${takes[part]} ${part} parameter${takes[part] === 1 ? "" : "s"}; ${given[part]} given`
        )
      }
    }
    return stored
  })
