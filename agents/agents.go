// Package agents holds the named agents of a deerflow: the ones in the
// config and the ones admins create from a chat (setup_agent, stored in
// bbolt), and which one answers a conversation: what /agent chose, else
// the chat's binding, else the bot's default, else the built-in agent.
//
// It imports agent (for Persona), bus, store, tools and config.
package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/deerflow/deerflow/bus"
	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/store"
)

// Def is a named agent.
type Def struct {
	Name        string
	Description string   `json:",omitempty"`
	Model       string   `json:",omitempty"`
	Soul        string   `json:",omitempty"`
	Tools       []string `json:",omitempty"`
	Skills      []string `json:",omitempty"`
	MCPServers  []string `json:",omitempty"`
	Memory      string   `json:",omitempty"` // shared | own
	// CreatedBy and Created are set for an agent created in a chat.
	CreatedBy string    `json:",omitempty"`
	Created   time.Time `json:",omitempty"`
}

// FromChat reports whether d was created in a chat (not in the config).
func (d Def) FromChat() bool { return d.CreatedBy != "" }

// Binding is what one channel instance (a bot) says about agents.
type Binding struct {
	Default string            // the bot's agent; "" = the built-in one
	Chats   map[string]string // chat id → agent
	Admins  []string          // user ids (or @names) who may create agents
}

// Options configure a Registry.
type Options struct {
	Store    *store.Store // required
	Config   []config.AgentDef
	Bindings map[string]Binding // by channel instance name ("telegram", "telegram-support")
	// ServerOf names the MCP server a tool comes from; nil or false: none.
	ServerOf func(tool string) (server string, ok bool)
	// Known check names setup_agent is given; nil accepts any.
	KnownModel, KnownTool, KnownSkill func(name string) bool
	Logger                            *slog.Logger
}

// Registry knows the agents and who answers where. It is safe for
// concurrent use.
type Registry struct {
	opts Options
	conf []Def
	log  *slog.Logger
}

// New returns a Registry.
func New(opts Options) *Registry {
	r := &Registry{opts: opts, log: opts.Logger}
	if r.log == nil {
		r.log = slog.Default()
	}
	for _, c := range opts.Config {
		r.conf = append(r.conf, Def{Name: c.Name, Description: c.Description, Model: c.Model, Soul: c.Soul,
			Tools: c.Tools, Skills: c.Skills, MCPServers: c.MCPServers, Memory: c.Memory})
	}
	return r
}

// Store keys: the agents created in chats (one record: a handful of
// small definitions), and each conversation's /agent choice.
const (
	defsKey    = "agents:defs"
	choicePref = "agents:conv:"
)

// stored reads the agents created in chats.
func stored(tx *store.Tx) ([]Def, error) {
	b, err := tx.State(defsKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var defs []Def
	if err := json.Unmarshal(b, &defs); err != nil {
		return nil, fmt.Errorf("agents: stored definitions: %w", err)
	}
	return defs, nil
}

// List returns every agent: the config's first, in order, then those
// created in chats by name.
func (r *Registry) List() ([]Def, error) {
	var defs []Def
	err := r.opts.Store.View(func(tx *store.Tx) (err error) {
		defs, err = stored(tx)
		return err
	})
	slices.SortFunc(defs, func(a, b Def) int { return strings.Compare(a.Name, b.Name) })
	return append(slices.Clone(r.conf), defs...), err
}

// Get returns the agent called name.
func (r *Registry) Get(name string) (Def, bool) {
	defs, err := r.List()
	if err != nil {
		r.log.Warn("reading agents", "err", err)
	}
	i := slices.IndexFunc(defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return defs[i], true
}

// Source says why an agent answers a conversation.
type Source string

const (
	Chosen    Source = "chosen with /agent"
	ChatBound Source = "this chat's agent"
	BotBound  Source = "this bot's agent"
	BuiltIn   Source = "built in"
)

// For returns the agent that answers in's conversation and why; ok is
// false for the built-in agent. A binding to an agent that no longer
// exists is skipped (and logged).
func (r *Registry) For(in *bus.Inbound) (d Def, src Source, ok bool) {
	key := in.ChatKey()
	var chosen string
	r.opts.Store.View(func(tx *store.Tx) error {
		if b, err := tx.State(choicePref + key); err == nil {
			chosen = string(b)
		}
		return nil
	})
	b := r.opts.Bindings[in.Channel]
	for _, c := range []struct {
		name string
		src  Source
	}{{chosen, Chosen}, {b.Chats[in.ChatID], ChatBound}, {b.Default, BotBound}} {
		if c.name == "" {
			continue
		}
		if d, ok := r.Get(c.name); ok {
			return d, c.src, true
		}
		r.log.Warn("an agent named in a binding does not exist", "agent", c.name, "chat", key, "binding", string(c.src))
	}
	return Def{}, BuiltIn, false
}

// Choose makes name answer the conversation chatKey from its next
// message, across restarts and /new; "" returns it to its binding.
func (r *Registry) Choose(chatKey, name string) error {
	if name != "" {
		if _, ok := r.Get(name); !ok {
			return fmt.Errorf("there is no agent called %q", name)
		}
	}
	return r.opts.Store.Update(func(tx *store.Tx) error {
		return tx.PutState(choicePref+chatKey, []byte(name))
	})
}
