package gateway

import (
	"net/http"
	"strings"

	"github.com/deerflow/deerflow/skills"
)

// skillJSON is DeerFlow's SkillResponse (frontend core/skills/type.ts).
type skillJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Category    string `json:"category"` // public (built in) | custom (skills.path)
	License     string `json:"license"`
	Enabled     bool   `json:"enabled"`
	Editable    bool   `json:"editable"` // never: custom skills are files, or the agent's (skill_manage)
}

func (g *Gateway) skillOf(s *skills.Skill) skillJSON {
	_, on := g.o.Skills.Lookup(s.Name)
	cat := "public"
	if s.Custom {
		cat = "custom"
	}
	return skillJSON{Name: s.Name, Description: s.Description, Category: cat, License: s.License, Enabled: on}
}

// listSkills answers GET /api/skills.
func (g *Gateway) listSkills(w http.ResponseWriter, r *http.Request) {
	list := []skillJSON{}
	if g.o.Skills != nil {
		for _, s := range g.o.Skills.All() {
			list = append(list, g.skillOf(s))
		}
	}
	reply(w, http.StatusOK, map[string]any{"skills": list})
}

// switchSkill answers PUT /api/skills/{name} {"enabled": bool}: the
// skills manager's switch, as /skills enable|disable from the operator
// (user id "api:<operator>"). When skills.admins is set and does not
// list that id, the manager refuses and the answer is 403 with its words.
func (g *Gateway) switchSkill(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Enabled *bool `json:"enabled"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.Enabled == nil {
		fail(w, http.StatusUnprocessableEntity, "enabled (true or false) is required")
		return
	}
	if g.o.Skills == nil {
		fail(w, http.StatusNotFound, "Skills are not loaded")
		return
	}
	name := r.PathValue("name")
	s := g.find(name)
	if s == nil {
		fail(w, http.StatusNotFound, "Skill '"+name+"' not found")
		return
	}
	verb := "disable"
	if *body.Enabled {
		verb = "enable"
	}
	said := g.o.Skills.Command("api:"+g.o.Operator, verb+" "+s.Name)
	if j := g.skillOf(s); j.Enabled != *body.Enabled {
		fail(w, http.StatusForbidden, said)
		return
	}
	reply(w, http.StatusOK, g.skillOf(s))
}

// find is the loaded skill called name (enabled or not).
func (g *Gateway) find(name string) *skills.Skill {
	for _, s := range g.o.Skills.All() {
		if s.Name == strings.ToLower(strings.TrimSpace(name)) {
			return s
		}
	}
	return nil
}

// installSkill answers POST /api/skills/install: deerflow installs no
// .skill archives over HTTP.
func (g *Gateway) installSkill(w http.ResponseWriter, r *http.Request) {
	notHere(w, "Installing .skill archives is not supported: put the skill's directory in skills.path (custom skills), or let the agent write it with skill_manage when skill_evolution is on.")
}
