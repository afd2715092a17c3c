package t9kcli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/utils/ptr"

	tensorstackv1beta1 "github.com/accelstack/accelstack/api/tensorstack/v1beta1"
)

// mlservice is the MLService kind of the command tree.
var mlservice = kindNamed("mlservice")

// setCanaryCommand changes which releases of an MLService serve its
// global URL and how its traffic is split.
func (o *options) setCanaryCommand() *cobra.Command {
	var (
		c                changeFlags
		defaultR, canary string
		traffic          int32
	)
	cmd := &cobra.Command{
		Use:     "set-canary NAME",
		Aliases: []string{"canary"},
		Short:   "Set an MLService's default release, its canary release and the canary's share of the traffic",
		Long: "Set the release that serves the MLService's global URL (--default), the canary release\n" +
			"(--canary; --canary= removes it) and the percentage of requests the canary gets (--traffic,\n" +
			"1 to 99). Flags not given keep their value.",
		Example: "  t9k mls set-canary maskdetection --default=foo --canary=bar --traffic=20 -p demo\n" +
			"  t9k mls set-canary maskdetection --traffic=30 -p demo\n" +
			"  t9k mls set-canary maskdetection --canary= -p demo --dry-run",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(mlservice),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.validate(cmd); err != nil {
				return err
			}
			flags := cmd.Flags()
			if !flags.Changed("default") && !flags.Changed("canary") && !flags.Changed("traffic") {
				return usageError(cmd, "give --default, --canary or --traffic")
			}
			m := &tensorstackv1beta1.MLService{}
			r, err := o.typed(cmd.Context(), mlservice, args[0], m)
			if err != nil {
				return err
			}
			if flags.Changed("default") {
				m.Spec.Default = defaultR
			}
			if flags.Changed("canary") {
				m.Spec.Canary = canary
				if canary == "" {
					m.Spec.CanaryTrafficPercent = nil
				}
			}
			if flags.Changed("traffic") {
				m.Spec.CanaryTrafficPercent = ptr.To(traffic)
			}
			if _, err := o.save(cmd.Context(), &c, r, m, false); err != nil {
				return fmt.Errorf("changing MLService %s: %w", args[0], err)
			}
			if !c.dryRun {
				fmt.Fprintf(o.streams.Out, "mlservice %q: default %s, canary %s\n", args[0], m.Spec.Default, canaryText(m))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&defaultR, "default", "", "The release that serves the global URL")
	cmd.Flags().StringVar(&canary, "canary", "", "The canary release; empty removes it")
	cmd.Flags().Int32Var(&traffic, "traffic", 0, "The canary's percentage of the requests, 1 to 99")
	c.add(cmd)
	return cmd
}

// canaryText says the canary and its share, or none.
func canaryText(m *tensorstackv1beta1.MLService) string {
	if m.Spec.Canary == "" {
		return "none"
	}
	return fmt.Sprintf("%s at %d%%", m.Spec.Canary, ptr.Deref(m.Spec.CanaryTrafficPercent, 0))
}

// deleteReleaseCommand removes releases from an MLService.
func (o *options) deleteReleaseCommand() *cobra.Command {
	var (
		c        changeFlags
		releases []string
	)
	cmd := &cobra.Command{
		Use:               "delete-release NAME --release=R1,R2",
		Short:             "Remove releases from an MLService",
		Long:              "Remove the named releases from the MLService. The default release cannot be removed (set\nanother default first); removing the canary removes its traffic share too.",
		Example:           "  t9k mls delete-release maskdetection --release foo,bar -p demo",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: o.completeNames(mlservice),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := c.validate(cmd); err != nil {
				return err
			}
			if len(releases) == 0 {
				return usageError(cmd, "name the releases to remove with --release")
			}
			m := &tensorstackv1beta1.MLService{}
			r, err := o.typed(cmd.Context(), mlservice, args[0], m)
			if err != nil {
				return err
			}
			var have []string
			for _, rel := range m.Spec.Releases {
				have = append(have, rel.Name)
			}
			for _, name := range releases {
				switch {
				case !slices.Contains(have, name):
					return fmt.Errorf("MLService %s has no release %q; its releases are: %s", args[0], name, strings.Join(have, ", "))
				case name == m.Spec.Default:
					return fmt.Errorf("release %q is MLService %s's default: set another default first (t9k mls set-canary --default)", name, args[0])
				case name == m.Spec.Canary:
					m.Spec.Canary, m.Spec.CanaryTrafficPercent = "", nil
				}
			}
			m.Spec.Releases = slices.DeleteFunc(m.Spec.Releases, func(rel tensorstackv1beta1.ReleaseSpec) bool {
				return slices.Contains(releases, rel.Name)
			})
			if _, err := o.save(cmd.Context(), &c, r, m, false); err != nil {
				return fmt.Errorf("changing MLService %s: %w", args[0], err)
			}
			if !c.dryRun {
				fmt.Fprintf(o.streams.Out, "mlservice %q: releases %s removed\n", args[0], strings.Join(releases, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&releases, "release", nil, "The releases to remove, comma-separated")
	c.add(cmd)
	return cmd
}
