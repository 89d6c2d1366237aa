"""Name pools of the scholarly KG (bench/kgs/scholarly.py), written for it: places, people, titles,
organisations. Real place and language names so the labels look like a real KG's (accents,
apostrophes, hyphens, commas, parentheses); every fact about them is invented by the generator.
"""

RES = "http://example.org/schol/resource/"
ONT = "http://example.org/schol/ontology/"


def rel(name: str) -> str:
    """The IRI (and rra relation id) of an ontology relation; `^name` for its inverse."""
    return "^" + ONT + name[1:] if name.startswith("^") else ONT + name


# country: (continent, official languages, cities: the capital first)
COUNTRIES = {
    "France": ("Europe", ["French"], ["Paris", "Lyon", "Toulouse", "Grenoble", "Gif-sur-Yvette"]),
    "Germany": ("Europe", ["German"], ["Berlin", "München", "Köln", "Tübingen", "Saarbrücken"]),
    "Spain": ("Europe", ["Spanish"], ["Madrid", "Barcelona", "València", "A Coruña"]),
    "Switzerland": ("Europe", ["German", "French", "Italian", "Romansh"], ["Bern", "Zürich", "Genève", "Lausanne"]),
    "Poland": ("Europe", ["Polish"], ["Warsaw", "Kraków", "Łódź", "Wrocław"]),
    "Czechia": ("Europe", ["Czech"], ["Prague", "Brno", "Olomouc"]),
    "Sweden": ("Europe", ["Swedish"], ["Stockholm", "Göteborg", "Malmö", "Uppsala"]),
    "Norway": ("Europe", ["Norwegian"], ["Oslo", "Trondheim", "Bergen", "Tromsø"]),
    "Denmark": ("Europe", ["Danish"], ["Copenhagen", "Aarhus", "Odense"]),
    "Netherlands": ("Europe", ["Dutch"], ["Amsterdam", "Delft", "Utrecht", "Eindhoven"]),
    "Italy": ("Europe", ["Italian"], ["Rome", "Milano", "Torino", "Bologna", "Pisa"]),
    "Portugal": ("Europe", ["Portuguese"], ["Lisbon", "Porto", "Coimbra"]),
    "Ireland": ("Europe", ["Irish", "English"], ["Dublin", "Cork", "Galway"]),
    "United Kingdom": ("Europe", ["English"], ["London", "Edinburgh", "Cambridge", "Oxford", "Manchester"]),
    "Iceland": ("Europe", ["Icelandic"], ["Reykjavík", "Akureyri"]),
    "Austria": ("Europe", ["German"], ["Vienna", "Graz", "Innsbruck"]),
    "Finland": ("Europe", ["Finnish", "Swedish"], ["Helsinki", "Espoo", "Tampere", "Oulu"]),
    "Greece": ("Europe", ["Greek"], ["Athens", "Thessaloniki", "Heraklion"]),
    "United States": ("North America", ["English"], ["Washington, D.C.", "Boston", "Pittsburgh", "Berkeley",
                                                      "Austin", "Seattle", "Ann Arbor"]),
    "Canada": ("North America", ["English", "French"], ["Ottawa", "Montréal", "Toronto", "Québec City", "Vancouver"]),
    "Mexico": ("North America", ["Spanish"], ["Mexico City", "Guadalajara", "Monterrey"]),
    "Brazil": ("South America", ["Portuguese"], ["Brasília", "São Paulo", "Rio de Janeiro", "Campinas"]),
    "Argentina": ("South America", ["Spanish"], ["Buenos Aires", "Córdoba", "Rosario"]),
    "Chile": ("South America", ["Spanish"], ["Santiago de Chile", "Valparaíso", "Concepción"]),
    "Colombia": ("South America", ["Spanish"], ["Bogotá", "Medellín", "Cali"]),
    "Japan": ("Asia", ["Japanese"], ["Tokyo", "Kyoto", "Ōsaka", "Sendai"]),
    "China": ("Asia", ["Mandarin Chinese"], ["Beijing", "Shanghai", "Hangzhou", "Wuhan"]),
    "South Korea": ("Asia", ["Korean"], ["Seoul", "Daejeon", "Busan"]),
    "India": ("Asia", ["Hindi", "English"], ["New Delhi", "Bengaluru", "Mumbai", "Chennai"]),
    "Singapore": ("Asia", ["English", "Malay", "Mandarin Chinese", "Tamil"], ["Singapore (city)"]),
    "Israel": ("Asia", ["Hebrew"], ["Jerusalem", "Tel Aviv", "Haifa"]),
    "Türkiye": ("Asia", ["Turkish"], ["Ankara", "İstanbul", "İzmir"]),
    "South Africa": ("Africa", ["Afrikaans", "English", "isiZulu"], ["Pretoria", "Cape Town", "Johannesburg", "Stellenbosch"]),
    "Nigeria": ("Africa", ["English", "Yoruba"], ["Abuja", "Lagos", "Ibadan"]),
    "Egypt": ("Africa", ["Arabic"], ["Cairo", "Alexandria"]),
    "Kenya": ("Africa", ["Swahili", "English"], ["Nairobi", "Mombasa"]),
    "Australia": ("Oceania", ["English"], ["Canberra", "Sydney", "Melbourne", "Brisbane"]),
    "New Zealand": ("Oceania", ["English", "Māori"], ["Wellington", "Auckland", "Christchurch"]),
}

# How institutions are named in a country's language ({c} = the city)
INSTITUTION_FORMS = {
    "French": ["Université de {c}", "École normale supérieure de {c}", "Institut polytechnique de {c}"],
    "German": ["Technische Universität {c}", "Universität {c}", "Max-Planck-Institut für Informatik ({c})"],
    "Spanish": ["Universidad de {c}", "Universidad Politécnica de {c}", "Universidad Nacional de {c}"],
    "Portuguese": ["Universidade de {c}", "Universidade Federal de {c}"],
    "Italian": ["Università di {c}", "Politecnico di {c}"],
    "Polish": ["Uniwersytet {c}", "Politechnika {c}"],
    "Swedish": ["{c} universitet", "Kungliga Tekniska högskolan ({c})"],
    "Norwegian": ["Universitetet i {c}"],
    "Danish": ["{c} Universitet"],
    "Dutch": ["Universiteit {c}", "Technische Universiteit {c}"],
}
ENGLISH_FORMS = ["University of {c}", "{c} Institute of Technology", "National University of {c}",
                 "{c} State University"]
SPECIAL_INSTITUTIONS = {"Gif-sur-Yvette": "Université Paris-Saclay", "Cambridge": "St John's College, Cambridge"}

CONTINENTS = ["Europe", "Asia", "Africa", "North America", "South America", "Oceania"]

FIRST = """José Zoë Jürgen Søren Chloé François Łukasz Ana-María Björn Inés Renée Siobhán Małgorzata Andrés
Dmitri Aoife Hélène Jörg Elif Çağla Nuria Tomás Ramón Zdeněk Ngozi Chidi Wei Mei Hiroshi Yūko Ji-woo Min-jun
Priya Arjun Kaveh Leïla Noémie Matías Joaquín Camila Sebastián Grete Henrik Astrid Eero Aino Tāne Aroha
Oliver Emma Liam Sarah David Anna Peter Maria John Laura Mohamed Fatima Yusuf Amara Thabo Lerato Giulia Marco
Alessandro Chiara Paulo Beatriz Rui Ingrid Håkon Dagný""".split()
LAST = """Álvarez-Núñez O'Brien Müller Dvořák García-Márquez van_der_Berg Østergaard D'Angelo Nakamura
Smith-Jones Kowalski Ó_Súilleabháin Lefèvre Schäfer Jiménez Nyström Åberg Šimek Okonkwo Adébáyò Zhang Li
Wang Suzuki Takahashi Kim Park Patel Sharma Iyer Haddad Cohen Levi Yılmaz Öztürk Papadopoulos Nikolaidis
Rossi Bianchi Ferreira Gonçalves Santos Silva Mendoza Rodríguez Hernández Fernández Costa Dubois Moreau
Lambert Bergström Lindqvist Virtanen Mäkinen Korhonen Hansen Nielsen Jansen de_Vries Bakker MacDonald
McAllister Murphy Kelly Walsh Smith Johnson Brown Taylor Wilson Anderson Thompson Nguyen Tran Mbeki Dlamini
Naidoo Mwangi Otieno Wiremu Ngata Fischer Weber Becker Hoffmann Krüger Novák Horváth Nowak Wiśniewska
Sørensen Jónsdóttir Guðmundsson Ramírez Castillo Vargas Kaplan Abdullah Hassan Farouk""".split()
FIRST = [f.replace("-", " ") if f == "Ana-María" else f for f in FIRST]
LAST = [n.replace("_", " ") for n in LAST]
INITIALS = "ABCDEFGHJKLMNPRSTVW"

# research topics: broad field -> subtopics (subtopic -broaderTopic-> field)
TOPICS = {
    "Artificial Intelligence": ["Knowledge Representation", "Automated Planning", "Multi-Agent Systems",
                                "Constraint Satisfaction"],
    "Machine Learning": ["Deep Learning", "Reinforcement Learning", "Federated Learning", "Active Learning",
                         "Causal Inference", "Graph Neural Networks", "Contrastive Learning"],
    "Natural Language Processing": ["Machine Translation", "Question Answering", "Entity Linking",
                                    "Relation Extraction", "Summarisation", "Semantic Parsing", "Speech Recognition"],
    "Databases": ["Query Optimisation", "Data Cleaning", "Schema Matching", "Stream Processing",
                  "Knowledge Graphs"],
    "Computer Vision": ["Object Detection", "Image Segmentation", "3-D Reconstruction", "Video Understanding"],
    "Theory of Computation": ["Approximation Algorithms", "Computational Complexity", "Model Checking",
                              "Type Theory"],
    "Human–Computer Interaction": ["Accessibility", "Visualisation", "Crowdsourcing"],
    "Information Retrieval": ["Dense Retrieval", "Learning to Rank", "Recommender Systems", "Web Search"],
    "Robotics": ["Robot Grasping", "Motion Planning", "SLAM (Localisation & Mapping)"],
    "Bioinformatics": ["Protein Folding", "Genome Assembly", "Drug Discovery"],
    "Security & Privacy": ["Differential Privacy", "Malware Analysis", "Cryptographic Protocols"],
    "Programming Languages": ["Program Synthesis", "Static Analysis", "Compilers", "Type Inference"],
}

# paper titles
CONCEPTS = """Graph Embeddings|Attention|Contrastive Pre-training|Program Synthesis|Entity Linking|Knowledge Graph
Completion|Query Answering|Federated Averaging|Sparse Retrieval|Dense Passage Retrieval|Causal Discovery|Label
Noise|Optimal Transport|Type Inference|Model Checking|Approximate Counting|Spectral Clustering|Topic Models|Speech
Recognition|Protein Structure Prediction|Robot Grasping|Semantic Parsing|Code Search|Data Cleaning|Schema
Matching|Query Optimisation|Differential Privacy|Link Prediction|Relation Extraction|Abstractive
Summarisation|Neural Machine Translation|Curriculum Learning|Multi-Hop Reasoning|Tokenisation|Reward
Modelling|Uncertainty Estimation|Anomaly Detection|Image Segmentation|Point Clouds|Dependency Parsing|Cardinality
Estimation|Learned Indexes|Motion Planning|Genome Assembly|Malware Detection|Static Analysis|Register
Allocation|Crowd Labelling|Visual Analytics|Recommendation|Learning to Rank|Continual Learning|Domain
Adaptation|Few-Shot Classification|Explanations|Counterfactual Reasoning|Time-Series Forecasting""".replace("\n", " ").split("|")
METHODS = """Hierarchical Transformers|Hyperbolic Networks|Bayesian Optimisation|Message Passing|Diffusion
Models|Monte Carlo Tree Search|Low-Rank Adapters|Gaussian Processes|Mixture-of-Experts|Variational
Inference|Random Features|Contrastive Objectives|Prompt Tuning|Knowledge Distillation|Integer Programming|SAT
Solvers|Graph Kernels|Sketching|Locality-Sensitive Hashing|Retrieval Augmentation|State-Space Models|Energy-Based
Models|Neural ODEs|Tree Automata""".replace("\n", " ").split("|")
ADJECTIVES = ["Robust", "Scalable", "Efficient", "Interpretable", "Zero-Shot", "Multilingual", "Self-Supervised",
              "Fair", "Provably Correct", "Incremental", "Lightweight", "Data-Efficient", "Faithful", "Private",
              "Calibrated", "Compositional"]
TASKS = """Entity Resolution|Question Answering over Knowledge Graphs|Low-Resource Translation|Code
Completion|Tabular Data|Long Documents|Medical Imaging|Legal Texts|Scientific Claims|Streaming Graphs|Noisy
Labels|Edge Devices|Open-Domain Dialogue|Satellite Imagery|Clinical Notes|Scholarly Metadata|Software
Repositories|Sign Language|Historical Newspapers|Molecular Graphs""".replace("\n", " ").split("|")
TITLE_FORMS = ["{M} for {T}", "On {C}: A Survey", "Towards {A} {C}", "{C} Revisited", "Rethinking {C}: {A} {M}",
               "{M}: {A} {C} for {T}", "Why {C} Fails, and How to Fix It", "{A} {C} with {M}",
               "Is {C} All You Need?", "A Note on {C}", "{C} in the Wild", "Beyond {C}: {M} for {T}",
               "What Makes {C} Work? Lessons from {T}", "{A} {C} (Extended Version)", "{C} Meets {M}",
               "Learning {C} from {T}", "{C} at Scale: {M} for {T}", "Dr. {M}, or: How I Learned to Stop Worrying About {C}"]

CONFERENCE_FORMS = ["International Conference on {F}", "European Symposium on {F}", "Workshop on {F}",
                    "Annual Meeting on {F}", "Asia-Pacific Conference on {F}", "Rencontres Francophones de {F}",
                    "Ibero-American Congress on {F}", "Nordic Conference on {F}"]
JOURNAL_FORMS = ["Journal of {F}", "{F} Letters", "Transactions on {F}", "Annals of {F}", "Revista de {F}",
                 "Zeitschrift für {F}", "{F} Review", "Open Journal of {F}"]
PUBLISHERS = ["Éditions Lumière", "Müller & Söhne Verlag", "Northbridge University Press",
              "Atlas Academic Publishers", "Oxbow Scientific", "Presses universitaires de Lyon", "Ediciones Alhambra",
              "Harbour & Vale", "Kōdō Academic", "Nordlys Forlag", "Calder Press", "Meridian Science Ltd."]
SOCIETIES = ["Société européenne de calcul", "Gesellschaft für Wissensverarbeitung",
             "Asociación Iberoamericana de Inteligencia Artificial", "Nordic Society for Language Technology",
             "Association for Computing Theory", "International Society for Data Engineering",
             "Royal Society of Information Science", "Pacific Rim Vision Society", "Società Italiana di Robotica",
             "African Machine Learning Society", "Association for Retrieval Research",
             "Society for Human–Computer Studies", "Polskie Towarzystwo Informatyczne", "Japan Association for Reasoning",
             "Canadian Society for Knowledge Systems", "Association of Bioinformatics & Biocomputing",
             "Internet Security Consortium (ISC²)", "Sociedade Brasileira de Linguagens de Programação"]
AWARD_NAMES = ["Emmy Noether Medal", "Boole Prize", "Sofia Kovalevskaya Award", "Ramanujan Fellowship",
               "Al-Khwārizmī Prize", "Hypatia Medal", "Leibniz Prize for Young Researchers", "Pascal Lecture Award",
               "Euler Medal", "Fourier Prize", "Babbage Award", "Grace Hopper Award", "Ørsted Medal",
               "Lovelace Medal", "Hilbert Award", "Gödel Medal"]
PAPER_AWARD_FORMS = ["Best Paper Award ({S})", "Test-of-Time Award ({S})", "Distinguished Paper Award ({S})"]
FUNDERS = [("Agence nationale de la recherche", "France"), ("Deutsche Forschungsgemeinschaft", "Germany"),
           ("National Science Foundation", "United States"), ("European Research Council", None),
           ("Japan Society for the Promotion of Science", "Japan"),
           ("Fundação para a Ciência e a Tecnologia", "Portugal"),
           ("Consejo Nacional de Investigaciones Científicas y Técnicas", "Argentina"),
           ("Schweizerischer Nationalfonds", "Switzerland"), ("Narodowe Centrum Nauki", "Poland"),
           ("Vetenskapsrådet", "Sweden"), ("Norges forskningsråd", "Norway"),
           ("Danmarks Frie Forskningsfond", "Denmark"),
           ("Nederlandse Organisatie voor Wetenschappelijk Onderzoek", "Netherlands"),
           ("Science Foundation Ireland", "Ireland"), ("Australian Research Council", "Australia"),
           ("Natural Sciences and Engineering Research Council", "Canada"),
           ("National Research Foundation of Korea", "South Korea"), ("Israel Science Foundation", "Israel"),
           ("National Research Foundation (South Africa)", "South Africa"), ("Royal Society Te Apārangi", "New Zealand")]
PROJECT_WORDS = ["Open", "Reasoning", "Heterogeneous", "Data", "Trustworthy", "Language", "Knowledge", "Networks",
                 "Learning", "Systems", "Scalable", "Inference", "Federated", "Graphs", "Multilingual", "Science",
                 "Robust", "Verification", "Sensing", "Agents", "Adaptive", "Memory", "Semantic", "Computing"]
DATASET_PARTS = (["Sci", "Geo", "Bio", "Legal", "Med", "Code", "Chem", "News", "Wiki", "Open", "Multi", "Astro",
                  "Hist", "Eco", "Socio", "Music"],
                 ["QA", "Bench", "Corpus", "Graph", "NLI", "Claims", "Parse", "Tables", "Ling", "Vision", "Dial"])
DATASET_SUFFIXES = ["", " v2", "-Hard", " (Multilingual)", " 2.0", "-Lite", " Extended"]
SOFTWARE_PARTS = (["graph", "kg", "sparql", "tensor", "onto", "lex", "query", "vec", "proof", "crawl", "bio", "geo",
                   "stream", "parse", "rank"],
                  ["kit", "forge", "flow", "lab", "DB", "py", "rs", "hub", "scope", "tools", "bench", "lib"])
LICENCES = ["MIT License", "Apache License 2.0", "GNU General Public License v3.0", "BSD 3-Clause License",
            "Creative Commons Attribution 4.0 International", "Mozilla Public License 2.0", "ISC License",
            "Eclipse Public License 2.0", "Open Data Commons Open Database License (ODbL)"]
PROGRAMMING_LANGUAGES = ["Kestrel", "Quillscript", "Marl", "Tern", "Lumen", "Basalt", "Cairn", "Sedge", "Ochre",
                         "Fjordlang", "Pīwakawaka", "Zephyr ML"]
DISCIPLINES = ["Computer Science", "Mathematics", "Physics", "Linguistics", "Statistics", "Electrical Engineering",
               "Biology", "Information Science"]
