package scenario

import (
	"fmt"
	"time"

	"github.com/fairsched/fairsched"
)

// Invoice is the type of the workload-rule scenario.
const Invoice fairsched.JobType = "invoice"

// WorkloadLabels: one slot, one job type (invoice, tier 10). The policy's
// workload rule "vip" matches jobs labelled customer=vip and puts them in
// tier 20. Four plain invoices arrive at T=0, two labelled ones at T=1: the
// labelled invoices take the slot as it frees, ahead of the plain ones
// that arrived first, and are admitted at tier 20 though their type is
// tier 10.
func WorkloadLabels() Scenario {
	vip := fairsched.Priority(20)
	sc := Scenario{Name: "32-workload-labels", Title: "A workload rule matched by labels puts customer=vip invoices in tier 20, ahead of the plain invoices of their type",
		MaxConcurrency: 1,
		Options: []fairsched.Option{fairsched.WithPriorityMode(fairsched.PriorityOrderOnly), fairsched.WithPolicy(fairsched.Policy{
			Workloads: []fairsched.Workload{{Name: "vip", MatchLabels: map[string]string{"customer": "vip"}, Priority: &vip}},
		})},
		Types: []Type{{Invoice, fairsched.JobTypeConfig{DefaultCost: 2 * time.Second, Priority: 10}}},
	}
	for i := range 4 {
		sc.Jobs = append(sc.Jobs, Job{Type: Invoice, ID: fmt.Sprintf("r%d", i+1), Arrival: 0, Duration: 2})
	}
	for i := range 2 {
		sc.Jobs = append(sc.Jobs, Job{Type: Invoice, ID: fmt.Sprintf("v%d", i+1), Arrival: 1, Duration: 2,
			Labels: map[string]string{"customer": "vip"}})
	}
	return sc
}

// workloadLabels checks WorkloadLabels' promise: the labelled invoices run
// at tier 20, right after the invoice that held the slot when they came,
// and the plain ones at their type's tier 10.
func workloadLabels(res Result) []string {
	var order []string
	tiers := map[string]int{}
	for _, e := range res.Timeline {
		if e.Kind == "admit" {
			order = append(order, e.Job)
			tiers[e.Job] = e.Base
		}
	}
	want := "[invoice(r1) invoice(v1) invoice(v2) invoice(r2) invoice(r3) invoice(r4)]"
	return []string{
		verdict(fmt.Sprint(order) == want, "the labelled invoices ran as the slot freed, ahead of the plain ones that came first: %v", order),
		verdict(tiers["invoice(v1)"] == 20 && tiers["invoice(v2)"] == 20 && tiers["invoice(r2)"] == 10,
			"the rule put the labelled invoices in tier 20, the plain ones stayed in 10 (%v)", tiers),
	}
}
