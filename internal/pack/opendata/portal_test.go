package opendata

import (
	"testing"

	"github.com/toolport/toolport/ckan"
)

func TestPortalPages(t *testing.T) {
	const (
		org = "ministry_of_transport"
		ds  = "private-and-commercial-vehicles"
		res = "053cea08-09bc-40ec-8f7a-156f0677aff3"
	)
	tests := []struct {
		base                                      string
		dataset, datasetNoOrg, resource, resNoOrg string
		organization, group, tag                  string
	}{
		{
			base:         "https://data.gov.il/api/3",
			dataset:      "https://data.gov.il/he/datasets/ministry_of_transport/private-and-commercial-vehicles",
			datasetNoOrg: "https://data.gov.il/dataset/private-and-commercial-vehicles",
			resource:     "https://data.gov.il/he/datasets/ministry_of_transport/private-and-commercial-vehicles/053cea08-09bc-40ec-8f7a-156f0677aff3",
			resNoOrg:     "https://data.gov.il/dataset/private-and-commercial-vehicles/resource/053cea08-09bc-40ec-8f7a-156f0677aff3",
			organization: "https://data.gov.il/he/organizations/ministry_of_transport",
			group:        "https://data.gov.il/group/ministry_of_transport",
			tag:          "https://data.gov.il/he/datasets?tags=%D7%A8%D7%9B%D7%91",
		},
		{
			base:         "https://demo.ckan.org",
			dataset:      "https://demo.ckan.org/dataset/private-and-commercial-vehicles",
			datasetNoOrg: "https://demo.ckan.org/dataset/private-and-commercial-vehicles",
			resource:     "https://demo.ckan.org/dataset/private-and-commercial-vehicles/resource/053cea08-09bc-40ec-8f7a-156f0677aff3",
			resNoOrg:     "https://demo.ckan.org/dataset/private-and-commercial-vehicles/resource/053cea08-09bc-40ec-8f7a-156f0677aff3",
			organization: "https://demo.ckan.org/organization/ministry_of_transport",
			group:        "https://demo.ckan.org/group/ministry_of_transport",
			tag:          "https://demo.ckan.org/dataset/?tags=%D7%A8%D7%9B%D7%91",
		},
		{
			// A portal below a path keeps it; names are path-escaped.
			base:         "http://127.0.0.1:5000/ckan/api/3/action",
			dataset:      "http://127.0.0.1:5000/ckan/dataset/private-and-commercial-vehicles",
			datasetNoOrg: "http://127.0.0.1:5000/ckan/dataset/private-and-commercial-vehicles",
			resource:     "http://127.0.0.1:5000/ckan/dataset/private-and-commercial-vehicles/resource/053cea08-09bc-40ec-8f7a-156f0677aff3",
			resNoOrg:     "http://127.0.0.1:5000/ckan/dataset/private-and-commercial-vehicles/resource/053cea08-09bc-40ec-8f7a-156f0677aff3",
			organization: "http://127.0.0.1:5000/ckan/organization/ministry_of_transport",
			group:        "http://127.0.0.1:5000/ckan/group/ministry_of_transport",
			tag:          "http://127.0.0.1:5000/ckan/dataset/?tags=%D7%A8%D7%9B%D7%91",
		},
	}
	for _, tt := range tests {
		c, err := ckan.NewClient(tt.base)
		if err != nil {
			t.Fatal(err)
		}
		p := pagesOf(c)
		for got, want := range map[string]string{
			p.Dataset(org, ds): tt.dataset, p.Dataset("", ds): tt.datasetNoOrg,
			p.Resource(org, ds, res): tt.resource, p.Resource("", ds, res): tt.resNoOrg,
			p.Organization(org): tt.organization, p.Group(org): tt.group, p.Tag("רכב"): tt.tag,
		} {
			if got != want {
				t.Errorf("%s: got %s, want %s", tt.base, got, want)
			}
		}
		if p.Dataset(org, "") != "" || p.Resource(org, "", res) != "" || p.Organization("") != "" || p.Tag("") != "" {
			t.Errorf("%s: a link without a name", tt.base)
		}
		if got := p.Dataset("", "a/b?c"); got != c.SiteURL()+"/dataset/a%2Fb%3Fc" {
			t.Errorf("unescaped name: %s", got)
		}
	}
}
