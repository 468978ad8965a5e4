/**
 * Interactive send bodies for the tests (docs/contract-messaging.md §5.4, §5.5): good ones, and
 * broken ones with the field each 400 must name.
 */

export const BUTTONS = {
  type: "button",
  header: { type: "text", text: "Your order #1042" },
  body: { text: "It ships tomorrow. Keep the delivery slot?" },
  footer: { text: "Reply any time" },
  action: {
    buttons: [
      { type: "reply", reply: { id: "keep", title: "Keep it" } },
      { type: "reply", reply: { id: "change", title: "Change slot" } }
    ]
  }
}

export const LIST = {
  type: "list",
  body: { text: "Pick a delivery slot" },
  action: {
    button: "See slots",
    sections: [
      {
        title: "Tomorrow",
        rows: [
          { id: "tomorrow-am", title: "Morning", description: "8:00 to 12:00" },
          { id: "tomorrow-pm", title: "Afternoon" }
        ]
      },
      { title: "Friday", rows: [{ id: "friday-am", title: "Morning" }] }
    ]
  }
}

export const x = (n: number) => "x".repeat(n)
const rows = (n: number, prefix = "r") =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, title: `Row ${i}` }))
const button = (id: string, title: string) => ({ type: "reply", reply: { id, title } })
export const withButtons = (buttons: ReadonlyArray<unknown>) => ({ ...BUTTONS, action: { buttons } })
const withSections = (sections: ReadonlyArray<unknown>) => ({ ...LIST, action: { button: "See slots", sections } })
export const interactive = (value: unknown) => ({ type: "interactive", interactive: value })

/** Bodies of `POST …/messages` that must be refused, and the field the 400 names. */
export const BAD_SENDS: ReadonlyArray<readonly [string, unknown, string]> = [
  ["no interactive", { type: "interactive" }, "interactive"],
  ["interactive on a text", { type: "text", text: "hi", interactive: BUTTONS }, "interactive"],
  ["text on an interactive", { ...interactive(BUTTONS), text: "hi" }, "text"],
  ["a reaction as a send", { type: "reaction", text: "👍" }, "type"],
  ["an unknown interactive type", interactive({ ...BUTTONS, type: "carousel" }), "interactive.type"],
  ["no body", interactive({ type: "button", action: BUTTONS.action }), "interactive.body"],
  ["an empty body", interactive({ ...BUTTONS, body: { text: "" } }), "interactive.body.text"],
  ["a body over 1024", interactive({ ...BUTTONS, body: { text: x(1025) } }), "interactive.body.text"],
  ["a media header", interactive({ ...BUTTONS, header: { type: "image", text: "a" } }), "interactive.header.type"],
  ["a header over 60", interactive({ ...BUTTONS, header: { type: "text", text: x(61) } }), "interactive.header.text"],
  ["a footer over 60", interactive({ ...BUTTONS, footer: { text: x(61) } }), "interactive.footer.text"],
  ["no buttons", interactive({ ...BUTTONS, action: {} }), "interactive.action.buttons"],
  ["zero buttons", interactive(withButtons([])), "interactive.action.buttons"],
  [
    "four buttons",
    interactive(withButtons([button("a", "A"), button("b", "B"), button("c", "C"), button("d", "D")])),
    "interactive.action.buttons"
  ],
  [
    "a URL button",
    interactive(withButtons([{ type: "url", reply: { id: "a", title: "A" } }])),
    "interactive.action.buttons.0.type"
  ],
  ["a button id over 256", interactive(withButtons([button(x(257), "A")])), "interactive.action.buttons.0.reply.id"],
  [
    "a button title over 20",
    interactive(withButtons([button("a", x(21))])),
    "interactive.action.buttons.0.reply.title"
  ],
  ["an empty button title", interactive(withButtons([button("a", "")])), "interactive.action.buttons.0.reply.title"],
  [
    "two buttons with one id",
    interactive(withButtons([button("a", "A"), button("a", "B")])),
    "interactive.action.buttons.1.reply.id"
  ],
  [
    "two buttons with one title",
    interactive(withButtons([button("a", "A"), button("b", "A")])),
    "interactive.action.buttons.1.reply.title"
  ],
  [
    "sections on buttons",
    interactive({ ...BUTTONS, action: { ...BUTTONS.action, sections: LIST.action.sections } }),
    "interactive.action.sections"
  ],
  [
    "a list button on buttons",
    interactive({ ...BUTTONS, action: { ...BUTTONS.action, button: "See" } }),
    "interactive.action.button"
  ],
  [
    "a list without its button",
    interactive({ ...LIST, action: { sections: LIST.action.sections } }),
    "interactive.action.button"
  ],
  [
    "a list button over 20",
    interactive({ ...LIST, action: { ...LIST.action, button: x(21) } }),
    "interactive.action.button"
  ],
  ["a list without sections", interactive({ ...LIST, action: { button: "See" } }), "interactive.action.sections"],
  ["a list with zero sections", interactive(withSections([])), "interactive.action.sections"],
  [
    "a list with eleven sections",
    interactive(withSections(Array.from({ length: 11 }, (_, i) => ({ title: `S${i}`, rows: rows(1, `s${i}-`) })))),
    "interactive.action.sections"
  ],
  [
    "a list with eleven rows in all",
    interactive(
      withSections([
        { title: "A", rows: rows(6, "a") },
        { title: "B", rows: rows(5, "b") }
      ])
    ),
    "interactive.action.sections"
  ],
  ["a section of eleven rows", interactive(withSections([{ rows: rows(11) }])), "interactive.action.sections.0.rows"],
  [
    "a section without rows",
    interactive(withSections([{ title: "A", rows: [] }])),
    "interactive.action.sections.0.rows"
  ],
  [
    "an untitled section among two",
    interactive(withSections([{ title: "A", rows: rows(1, "a") }, { rows: rows(1, "b") }])),
    "interactive.action.sections.1.title"
  ],
  [
    "a section title over 24",
    interactive(withSections([{ title: x(25), rows: rows(1) }])),
    "interactive.action.sections.0.title"
  ],
  [
    "a row id over 200",
    interactive(withSections([{ rows: [{ id: x(201), title: "A" }] }])),
    "interactive.action.sections.0.rows.0.id"
  ],
  [
    "a row title over 24",
    interactive(withSections([{ rows: [{ id: "a", title: x(25) }] }])),
    "interactive.action.sections.0.rows.0.title"
  ],
  [
    "a row description over 72",
    interactive(withSections([{ rows: [{ id: "a", title: "A", description: x(73) }] }])),
    "interactive.action.sections.0.rows.0.description"
  ],
  [
    "two rows with one id",
    interactive(
      withSections([
        { title: "A", rows: rows(1) },
        { title: "B", rows: rows(1) }
      ])
    ),
    "interactive.action.sections.1.rows.0.id"
  ],
  [
    "buttons on a list",
    interactive({ ...LIST, action: { ...LIST.action, buttons: BUTTONS.action.buttons } }),
    "interactive.action.buttons"
  ]
]

/** Bodies of `POST /api/v1/messages/{id}/reactions` that must be refused. */
export const BAD_REACTIONS: ReadonlyArray<readonly [string, unknown]> = [
  ["no emoji", {}],
  ["a word", { emoji: "yes" }],
  ["two emoji", { emoji: "👍👍" }],
  ["a letter", { emoji: "a" }],
  ["a number", { emoji: 1 }]
]
