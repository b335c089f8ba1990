"""Word lists and sentence templates of the synthetic financial-news corpus.

Everything here is invented for the corpus: the company name stems, the people
and the events are fictional. Templates use ``str.format`` slots filled by
:mod:`holistic.scenarios.haystack.generator`:

``{company}``, ``{ceo}``, ``{product}``, ``{metric}``, ``{pct}`` (a small change),
``{big_pct}`` (a large one), ``{amount}``, ``{quarter}``, ``{year}``, ``{region}``,
``{city}``, ``{unit}``, ``{jobs}``, ``{analyst_firm}``, ``{role}``, ``{person}``, ``{segment}``,
``{hq}`` (the company's home city).

Each sentiment class has its own title and event templates; the tone words carry
the class (``soars``/``record`` for very positive, ``slips`` for negative...), so
the sentiment is decidable from the text alone.
"""

from __future__ import annotations

# Sectors: (company-name suffix, products, business units).
SECTORS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "banking": (
        "Bank",
        ("mortgage book", "retail deposits", "credit card portfolio", "wealth platform"),
        ("retail banking", "corporate lending", "wealth management"),
    ),
    "insurance": (
        "Insurance",
        ("motor policies", "life annuities", "commercial cover", "health plans"),
        ("life insurance", "property and casualty", "reinsurance"),
    ),
    "energy": (
        "Energy",
        ("offshore wind farm", "gas field", "solar portfolio", "refinery"),
        ("upstream", "renewables", "trading"),
    ),
    "utilities": (
        "Utilities",
        ("water network", "grid upgrade", "district heating plant", "smart meters"),
        ("networks", "generation", "customer services"),
    ),
    "retail": (
        "Retail Group",
        ("discount stores", "online marketplace", "own-brand range", "loyalty scheme"),
        ("grocery", "e-commerce", "fashion"),
    ),
    "semiconductors": (
        "Semiconductor",
        ("memory chips", "power modules", "sensor chips", "foundry line"),
        ("memory", "automotive chips", "foundry services"),
    ),
    "software": (
        "Software",
        ("cloud suite", "payroll platform", "security software", "analytics service"),
        ("cloud", "enterprise licences", "consulting"),
    ),
    "pharmaceuticals": (
        "Pharma",
        ("cancer drug", "diabetes treatment", "vaccine candidate", "generic portfolio"),
        ("oncology", "generics", "consumer health"),
    ),
    "telecom": (
        "Telecom",
        ("fibre network", "5G rollout", "mobile tariffs", "broadband bundle"),
        ("mobile", "fixed line", "enterprise services"),
    ),
    "automotive": (
        "Motors",
        ("electric SUV", "hybrid sedan", "battery plant", "commercial vans"),
        ("passenger cars", "trucks", "financing"),
    ),
    "airlines": (
        "Airways",
        ("long-haul routes", "regional fleet", "cargo service", "frequent flyer programme"),
        ("passenger", "cargo", "maintenance"),
    ),
    "mining": (
        "Mining",
        ("copper mine", "lithium project", "iron ore operations", "nickel smelter"),
        ("copper", "battery metals", "iron ore"),
    ),
}

NAME_STEMS: tuple[str, ...] = (
    "Halden",
    "Norvik",
    "Castellan",
    "Brightwater",
    "Orrin",
    "Kestrel",
    "Valemont",
    "Tarrow",
    "Ashcombe",
    "Lumera",
    "Quillon",
    "Redmere",
    "Sorrell",
    "Estmark",
    "Pellam",
    "Veyra",
    "Carrick",
    "Duvane",
    "Ostrava",
    "Marlow",
    "Thorne",
    "Ivel",
    "Bramford",
    "Calder",
    "Westfold",
    "Amberly",
    "Rosvik",
    "Galloway",
    "Nerin",
    "Stratton",
    "Fenwick",
    "Kyra",
    "Holmby",
    "Arden",
    "Selwyn",
    "Tamsin",
    "Corvel",
    "Dunmore",
    "Elara",
    "Framlin",
)

FIRST_NAMES: tuple[str, ...] = (
    "Anna",
    "Bram",
    "Clara",
    "Dario",
    "Elin",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Kaia",
    "Luca",
    "Mira",
    "Niko",
    "Olga",
    "Pavel",
    "Rosa",
    "Sami",
    "Tove",
    "Uma",
    "Viktor",
    "Wen",
    "Yara",
    "Zeno",
)
LAST_NAMES: tuple[str, ...] = (
    "Albrecht",
    "Bianchi",
    "Castro",
    "Dahl",
    "Eriksen",
    "Fontaine",
    "Gruber",
    "Haas",
    "Ilves",
    "Jansen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Novak",
    "Okafor",
    "Petrov",
    "Quint",
    "Rahman",
    "Sato",
    "Tanaka",
    "Urban",
    "Varga",
    "Weber",
    "Zhou",
)

CITIES: tuple[str, ...] = (
    "Rotterdam",
    "Lyon",
    "Gothenburg",
    "Porto",
    "Leipzig",
    "Turin",
    "Aarhus",
    "Bilbao",
    "Graz",
    "Tampere",
    "Ghent",
    "Bergen",
    "Kraków",
    "Valencia",
    "Antwerp",
    "Malmö",
)
REGIONS: tuple[str, ...] = (
    "Northern Europe",
    "Southeast Asia",
    "Latin America",
    "the Middle East",
    "North America",
    "Central Europe",
    "West Africa",
    "the Nordics",
    "the Iberian peninsula",
    "East Asia",
)
METRICS: tuple[str, ...] = (
    "revenue",
    "operating profit",
    "net income",
    "order intake",
    "free cash flow",
    "adjusted earnings",
    "gross margin",
    "sales volume",
)
ANALYST_FIRMS: tuple[str, ...] = (
    "Morrow Securities",
    "Kinsley Research",
    "Harbourline Capital",
    "Stanmore Partners",
    "Ellery & Co",
)
ROLES: tuple[str, ...] = ("chief financial officer", "chief operating officer", "head of strategy", "chair")
UNITS: tuple[str, ...] = ("plant", "warehouse", "office", "service centre", "data centre", "depot")

# (title template, body event template) per sentiment class.
EVENTS: dict[str, tuple[tuple[str, str], ...]] = {
    "very_positive": (
        (
            "{company} shares soar after record {quarter} {metric}",
            "{company} reported record {metric} for {quarter} {year}, up {big_pct}% from a year earlier and far "
            "above every analyst forecast. The board raised its full-year outlook for the second time.",
        ),
        (
            "{company} wins landmark {amount} deal in {region}",
            "{company} has won its largest contract ever, a {amount} agreement covering its {product} in {region}. "
            "Analysts at {analyst_firm} called the deal transformational.",
        ),
        (
            "{company} doubles dividend as profits surge",
            "{company} doubled its dividend after {metric} surged {big_pct}% in {quarter}. Chief executive {ceo} "
            "said demand for its {product} was the strongest in the company's history.",
        ),
        (
            "Blowout quarter lifts {company} to all-time high",
            "A blowout {quarter} sent {company} stock to an all-time high. {metric} jumped {big_pct}% and the "
            "company announced a {amount} share buyback.",
        ),
        (
            "{company} breakthrough with {product} delights investors",
            "{company} said its new {product} beat every target in trials, a breakthrough that {analyst_firm} "
            "expects to lift {metric} sharply for years. Shares rallied {big_pct}%.",
        ),
        (
            "{company} upgraded to strong buy after stellar results",
            "{analyst_firm} upgraded {company} to strong buy after stellar {quarter} results, with {metric} up "
            "{big_pct}%. {ceo} called it an exceptional quarter on every measure.",
        ),
    ),
    "positive": (
        (
            "{company} {metric} rises {pct}% in {quarter}",
            "{company} said {metric} rose {pct}% in {quarter} {year}, slightly ahead of expectations, helped by "
            "steady demand for its {product}.",
        ),
        (
            "{company} signs {amount} supply agreement",
            "{company} signed a {amount} agreement to supply its {product} to customers in {region}, adding to a "
            "solid order book.",
        ),
        (
            "{company} opens new {unit} in {city}",
            "{company} opened a new {unit} in {city}, a move {ceo} said would support modest growth in "
            "{metric} next year.",
        ),
        (
            "{company} beats forecasts on firm demand",
            "{company} edged past forecasts in {quarter} as {metric} improved {pct}%. Management kept its "
            "guidance and said the outlook had brightened somewhat.",
        ),
        (
            "{company} raises prices, margins improve",
            "Higher prices for its {product} helped {company} improve {metric} by {pct}% in {quarter}, the "
            "company said, calling the trend encouraging.",
        ),
        (
            "{company} expands {product} into {region}",
            "{company} is expanding its {product} into {region} after a successful pilot, and expects the "
            "launch to add to {metric} from {year}.",
        ),
    ),
    "neutral": (
        (
            "{company} to hold annual meeting in {city}",
            "{company} will hold its annual general meeting in {city} on the usual schedule. The agenda "
            "includes the re-election of board members and the auditor's report for {year}.",
        ),
        (
            "{company} names new {role}",
            "{company} appointed {person} as {role}, effective next quarter. {person} replaces a predecessor "
            "who is retiring after eight years.",
        ),
        (
            "{company} completes previously announced restructuring of {segment}",
            "{company} said it had completed the previously announced reorganisation of its {segment} unit. "
            "The change does not alter its financial guidance.",
        ),
        (
            "{company} confirms {quarter} results date",
            "{company} will publish its {quarter} {year} results on the date set earlier in the year, followed "
            "by a call with analysts hosted by {ceo}.",
        ),
        (
            "{company} reports {metric} in line with guidance",
            "{company} reported {quarter} {metric} broadly in line with its own guidance and with the consensus "
            "of analysts. The company made no change to its outlook.",
        ),
        (
            "{company} moves {unit} operations to {city}",
            "{company} is relocating some {unit} operations to {city} as part of routine planning. About "
            "{jobs} staff are affected and will transfer to the new site.",
        ),
    ),
    "negative": (
        (
            "{company} {metric} slips {pct}% in {quarter}",
            "{company} said {metric} slipped {pct}% in {quarter} {year}, below expectations, as demand for its "
            "{product} softened.",
        ),
        (
            "{company} delays launch of {product}",
            "{company} delayed the launch of its {product} by several months, citing supplier problems. "
            "{analyst_firm} trimmed its price target.",
        ),
        (
            "{company} trims outlook on weaker demand",
            "{company} trimmed its full-year outlook after weaker demand in {region} weighed on {metric} in "
            "{quarter}. Shares fell {pct}%.",
        ),
        (
            "{company} loses {amount} contract to rival",
            "{company} lost a {amount} contract for its {product} in {region} to a competitor, a setback for "
            "its growth plans, {ceo} acknowledged.",
        ),
        (
            "{company} misses estimates as costs climb",
            "Rising costs pushed {company} below analyst estimates in {quarter}, with {metric} down {pct}%. "
            "The company said margins would remain under pressure.",
        ),
        (
            "{company} downgraded to underperform",
            "{analyst_firm} downgraded {company} to underperform, warning that {metric} could disappoint as "
            "competition for its {product} intensifies.",
        ),
    ),
    "very_negative": (
        (
            "{company} shares plunge after profit warning",
            "{company} shares plunged {big_pct}% after a profit warning. {metric} collapsed in {quarter} and "
            "the company suspended its guidance for {year}.",
        ),
        (
            "{company} faces fraud probe over accounts",
            "Regulators opened a fraud investigation into {company} over irregularities in its accounts. "
            "{ceo} has stepped aside while the probe into its {segment} unit continues.",
        ),
        (
            "{company} to cut {jobs} jobs as losses mount",
            "{company} will cut {jobs} jobs and close its {unit} in {city} after losses deepened sharply in "
            "{quarter}. Unions called the decision a disaster.",
        ),
        (
            "{company} suspends dividend amid cash crisis",
            "{company} suspended its dividend and warned of a severe cash shortfall after {metric} crashed "
            "{big_pct}%. Its bonds were cut to junk.",
        ),
        (
            "{company} recalls {product} after serious failures",
            "{company} ordered a costly recall of its {product} after serious safety failures in {region}. "
            "{analyst_firm} said the damage to the brand could be lasting.",
        ),
        (
            "{company} slumps to record loss",
            "{company} slumped to the worst loss in its history in {quarter} {year}, as {metric} fell "
            "{big_pct}% and write-downs on its {product} mounted.",
        ),
    ),
}

# Optional closing sentences (tone-neutral): add variety without changing the class.
CLOSINGS: tuple[str, ...] = (
    "The company is headquartered in {hq}.",
    "{company} employs about {jobs} people in {region}.",
    "A spokesperson declined to comment further.",
    "The statement was released before markets opened.",
    "{company} will give more detail at its next results presentation.",
    "The figures are unaudited.",
    "",
    "",
)
