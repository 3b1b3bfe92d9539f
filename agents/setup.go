package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deerflow/deerflow/config"
	"github.com/deerflow/deerflow/store"
	"github.com/deerflow/deerflow/tools"
)

// SetupTool is the tool admins create agents with.
const SetupTool = "setup_agent"

type setupArgs struct {
	Name        string   `json:"name" desc:"The agent's name: 1 to 32 of a-z, 0-9 and -, e.g. 'coder'. An existing agent created in a chat is updated; agents from the config can't be changed here."`
	Description string   `json:"description" desc:"One line saying what the agent is for, shown by /agent."`
	Soul        string   `json:"soul" desc:"The agent's persona and standing instructions, added to its system prompt, e.g. 'You are terse; answer with code first.'"`
	Model       string   `json:"model,omitempty" desc:"The name of one of the configured models (see /models); default the default model."`
	Tools       []string `json:"tools,omitempty" desc:"The exact tool names it may use (include ask_clarification and present_files if wanted); empty: all."`
	Skills      []string `json:"skills,omitempty" desc:"The skill names it may use; empty: all."`
}

// Tool is setup_agent; nil when no bot has admins (nobody could use it).
// It is offered only to admins (see Persona).
func (r *Registry) Tool() tools.Tool {
	if !r.setupOn() {
		return nil
	}
	return tools.Func(SetupTool,
		"Create or update a named agent (persona, model, tools, skills) that people can then switch a conversation to with /agent NAME. Only for the administrators of this bot; use it when they ask for a new agent.",
		func(ctx context.Context, in setupArgs) (string, error) {
			d := Def{Name: strings.TrimSpace(in.Name), Description: in.Description, Soul: in.Soul, Model: in.Model,
				Tools: in.Tools, Skills: in.Skills, Memory: "shared", CreatedBy: tools.EnvFrom(ctx).UserID}
			if d.CreatedBy == "" {
				d.CreatedBy = "unknown"
			}
			updated, err := r.Put(d)
			if err != nil {
				return "", err
			}
			verb := "Created"
			if updated {
				verb = "Updated"
			}
			return fmt.Sprintf("%s the agent %s. It answers a conversation once someone sends /agent %s there.", verb, d.Name, d.Name), nil
		})
}

// check says what is wrong with d, in words for the model or the CLI.
func (r *Registry) check(d Def) error {
	switch {
	case !config.ValidAgentName(d.Name):
		return fmt.Errorf("the name %q is not valid: use 1 to 32 of a-z, 0-9 and -", d.Name)
	case slices.ContainsFunc(r.conf, func(c Def) bool { return c.Name == d.Name }):
		return fmt.Errorf("the agent %s is defined in the config file and can't be changed from a chat", d.Name)
	case strings.TrimSpace(d.Soul) == "" && strings.TrimSpace(d.Description) == "":
		return fmt.Errorf("give the agent a description and a soul (its persona)")
	case d.Model != "" && r.opts.KnownModel != nil && !r.opts.KnownModel(d.Model):
		return fmt.Errorf("there is no model called %q (see /models)", d.Model)
	}
	for _, t := range d.Tools {
		if r.opts.KnownTool != nil && !r.opts.KnownTool(t) {
			return fmt.Errorf("there is no tool called %q", t)
		}
	}
	for _, s := range d.Skills {
		if r.opts.KnownSkill != nil && !r.opts.KnownSkill(s) {
			return fmt.Errorf("there is no skill called %q (see /skills)", s)
		}
	}
	return nil
}

// Put creates or replaces an agent created in a chat and reports whether
// it replaced one (keeping when it was first created).
func (r *Registry) Put(d Def) (updated bool, err error) {
	if err := r.check(d); err != nil {
		return false, err
	}
	d.Created = time.Now().UTC()
	err = r.opts.Store.Update(func(tx *store.Tx) error {
		defs, err := stored(tx)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(defs, func(o Def) bool { return o.Name == d.Name }); i >= 0 {
			d.Created, defs[i], updated = defs[i].Created, d, true
		} else {
			defs = append(defs, d)
		}
		return putStored(tx, defs)
	})
	return updated, err
}

// Delete removes an agent created in a chat; conversations bound to it
// fall back to their bindings.
func (r *Registry) Delete(name string) error {
	if slices.ContainsFunc(r.conf, func(c Def) bool { return c.Name == name }) {
		return fmt.Errorf("the agent %s is defined in the config file; remove it there", name)
	}
	return r.opts.Store.Update(func(tx *store.Tx) error {
		defs, err := stored(tx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(defs, func(o Def) bool { return o.Name == name })
		if i < 0 {
			return fmt.Errorf("there is no agent called %q created in a chat", name)
		}
		return putStored(tx, slices.Delete(defs, i, i+1))
	})
}

func putStored(tx *store.Tx, defs []Def) error {
	b, err := json.Marshal(defs)
	if err != nil {
		return err
	}
	return tx.PutState(defsKey, b)
}
