package policy

import "fmt"

// The checks of the settings a scheduler changes at run time: pure, so
// that a caller checks them before any scheduler sees the change, with the
// errors the scheduler gives.

// CheckKeyWeight checks SetKeyWeight's arguments: key is a name, weight is
// 0 (the default again) or a valid key weight.
func CheckKeyWeight(key string, weight float64) error {
	if err := InvalidName(ErrInvalidConfig, "SetKeyWeight key", key); err != nil {
		return err
	}
	if weight == 0 {
		return nil
	}
	return ValidateKeyWeight(key, weight)
}

// CheckGroupWeight checks SetGroupWeight's arguments under the groups
// configured (nil: none) and returns the group's new configuration; weight
// 0 is the default weight.
func CheckGroupWeight(gs *GroupsConfig, name string, weight int) (GroupConfig, error) {
	if gs == nil {
		return GroupConfig{}, InvalidConfig("SetGroupWeight", name, "group weights are not configured: no WithMaxConcurrency with group options")
	}
	cfg := gs.Config(name)
	cfg.Weight = weight
	if weight == 0 {
		cfg.Weight = gs.DefaultWeight
	}
	if err := cfg.Validate(name); err != nil {
		return GroupConfig{}, err
	}
	return cfg, nil
}

// CheckResetGroupWeights checks that group weights are configured.
func CheckResetGroupWeights(gs *GroupsConfig) error {
	if gs == nil {
		return InvalidConfig("ResetGroupWeights", "", "group weights are not configured")
	}
	return nil
}

// CheckGroupName checks the group a PauseGroup or ResumeGroup (op) names.
func CheckGroupName(op, name string) error {
	if name == "" {
		return fmt.Errorf("%w: %s: the group name must not be empty", ErrInvalidConfig, op)
	}
	return InvalidName(ErrInvalidConfig, op+" group", name)
}
