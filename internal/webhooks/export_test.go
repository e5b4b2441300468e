package webhooks

import "net/netip"

// SpecialPurposeBlocks are the blocks of the registries Public is built on.
func SpecialPurposeBlocks() []netip.Prefix {
	out := make([]netip.Prefix, len(specialPurposeRegistry))
	for i, e := range specialPurposeRegistry {
		out[i] = e.prefix
	}
	return out
}

// CheckEventTypes is Owner.checkEventTypes.
func (o Owner) CheckEventTypes(types []string) error { return o.checkEventTypes(types) }
