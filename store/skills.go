package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/deerflow/deerflow/store/internal/codec"
	"github.com/deerflow/deerflow/store/internal/schema"
)

// SkillState is a skill's switch, set with /skills. A skill without a
// state is enabled.
type SkillState struct {
	Enabled bool      `json:"enabled"`
	By      string    `json:"by,omitempty"` // who switched it last
	Updated time.Time `json:"updated,omitzero"`
}

// PutSkillState records a skill's switch.
func (tx *Tx) PutSkillState(name string, st *SkillState) error {
	b, err := tx.bucket(schema.Skills)
	if err != nil {
		return err
	}
	v, err := codec.JSON(st)
	if err != nil {
		return err
	}
	return b.Put([]byte(name), v)
}

// SkillStates returns every recorded switch, by skill name.
func (tx *Tx) SkillStates() (map[string]SkillState, error) {
	b, err := tx.bucket(schema.Skills)
	if err != nil {
		return nil, err
	}
	out := map[string]SkillState{}
	err = b.ForEach(func(k, v []byte) error {
		var st SkillState
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("store: skill state %s: %w", k, err)
		}
		out[string(k)] = st
		return nil
	})
	return out, err
}
