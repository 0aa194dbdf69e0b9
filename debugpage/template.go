package debugpage

import (
	_ "embed"
	"html/template"
)

//go:embed page.html
var pageHTML string

// page renders a view. html/template escapes every value from the snapshot.
var page = template.Must(template.New("page").Parse(pageHTML))
