package bus

// Command is a chat command and what it does.
type Command struct{ Name, Help string }

// Commands lists the chat commands the router answers, in help order;
// channels show them in their platform's command menu.
var Commands = []Command{
	{"new", "start a new conversation"},
	{"status", "show this conversation's thread, model and what is running"},
	{"stop", "stop the current reply (and drop waiting messages)"},
	{"retry", "run your last message again, or resume an unfinished research (after a restart or a failure)"},
	{"research", "research a topic in depth: a plan you review, steps in parallel, a report (/research auto TOPIC skips the review)"},
	{"models", "list models; /models NAME switches this conversation"},
	{"agent", "show this conversation's agent and the others; /agent NAME switches to one"},
	{"memory", "show what I remember about you (/memory forget N, clear, off, on)"},
	{"skills", "list skills; /skills enable|disable NAME; /NAME task uses one"},
	{"schedules", "list this conversation's scheduled tasks"},
	{"unschedule", "cancel a scheduled task: /unschedule ID"},
	{"goal", "show this conversation's goal; /goal TEXT sets it, /goal clear removes it"},
	{"plan", "show whether I keep a checklist here; /plan on|off switches it"},
	{"help", "show this list"},
}
