import { Context, type Effect } from "effect"
import type { Listed, Page } from "../Pagination.ts"
import type { MessageTemplate, TemplateUpdate } from "./Template.ts"

export interface TemplateFilter {
  readonly status?: string | undefined
  readonly name?: string | undefined
  readonly business_account_id?: string | undefined
}

/**
 * Templates per account and WhatsApp Business Account (WABA), unique by name and language, with
 * when each WABA's list was last synced from Meta (a list never synced is not used to refuse a send).
 */
export class TemplatesRepo extends Context.Service<
  TemplatesRepo,
  {
    /** By name, then language. */
    readonly list: (accountId: string, filter: TemplateFilter, page: Page) => Effect.Effect<Listed<MessageTemplate>>
    readonly find: (accountId: string, id: string) => Effect.Effect<MessageTemplate | undefined>
    /** Every template of one WABA, and when its list was last synced (null: never). */
    readonly ofBusinessAccount: (
      accountId: string,
      businessAccountId: string
    ) => Effect.Effect<{ readonly templates: ReadonlyArray<MessageTemplate>; readonly syncedAt: string | null }>
    /** Replaces the WABA's whole list with Meta's, marks it synced at `now` and frees its claim. */
    readonly replace: (
      accountId: string,
      businessAccountId: string,
      templates: ReadonlyArray<MessageTemplate>,
      now: string
    ) => Effect.Effect<void>
    /** Inserts; false when the WABA has a template of that name and language already. */
    readonly insert: (accountId: string, template: MessageTemplate) => Effect.Effect<boolean>
    /**
     * Meta's answer to a create: its id and category, and its status unless a webhook moved the
     * template out of PENDING first.
     */
    readonly recordCreated: (
      accountId: string,
      id: string,
      created: { readonly externalId: string; readonly status: string; readonly category: string },
      now: string
    ) => Effect.Effect<void>
    readonly remove: (accountId: string, ids: ReadonlyArray<string>) => Effect.Effect<void>
    /**
     * Meta's webhook: every account's template with that WABA and Meta id, or, not knowing Meta's id
     * yet (its create is under way), that name and language; each as it was and as it is now.
     */
    readonly applyUpdate: (
      update: TemplateUpdate,
      now: string
    ) => Effect.Effect<
      ReadonlyArray<{ readonly accountId: string; readonly before: MessageTemplate; readonly after: MessageTemplate }>
    >
    /**
     * Takes the WABA's sync until `until` unless another process holds it (true: ours). The
     * scheduled sync asks first, so each WABA is synced by one process at a time.
     */
    readonly claimSync: (
      accountId: string,
      businessAccountId: string,
      now: string,
      until: string
    ) => Effect.Effect<boolean>
    /** Frees a claim without a sync (Meta failed). */
    readonly releaseSync: (accountId: string, businessAccountId: string) => Effect.Effect<void>
  }
>()("core/TemplatesRepo") {}
