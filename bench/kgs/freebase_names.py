"""Names and value pools of the Freebase-style world (bench/kgs/freebase_subgraphs.py), written for
it. Names carry what real Freebase names carry: commas ("Paris, Texas"), parentheses
("Salt (2010 film)"), apostrophes, accents, suffixes ("Jr."); every fact about them is invented.
"""

CONTINENTS = ["Europe", "Asia", "Africa", "North America", "South America", "Oceania"]
COUNTRY_WORDS = ["Aldoria", "Belmark", "Carvania", "Drosmere", "Estrelia", "Fenwick Islands", "Galdor",
                 "Hesperia", "Istrana", "Jorvik", "Kaldera", "Lunaria", "Marisco", "Nordhavn", "Ostrava Republic",
                 "Pellonia", "Qasirah", "Rovenia", "Solvang", "Tarrant", "Umberland", "Valdoria", "Westmarch",
                 "Xandria", "Ysolde", "Zarathia", "Republic of Corvin", "São Brennan", "Kingdom of Elmet",
                 "Federated States of Ambria", "Tirnavos", "Mirelle", "Ondara", "Brevik", "Castellane",
                 "Dunmore", "Erebia", "Fjallby", "Grenmoor", "Halvard"]
PLACE_ROOTS = ["Ash", "Bel", "Cal", "Dun", "El", "Fair", "Glen", "Hart", "Iver", "Kings", "Lin", "Mar", "New",
               "Oak", "Port", "Red", "Salt", "Tor", "Wal", "West", "Bright", "Cold", "Green", "Stone", "Silver",
               "Saint-", "San ", "Santa ", "Villa ", "Mont", "Rio ", "Lake ", "Fort "]
PLACE_ENDS = ["ford", "ton", "bury", "field", "haven", "mouth", "wick", "dale", "port", "ville", "burg", "stad",
              "holm", "cester", "ley", "ridge", "water", "gate", "Clara", "Cruz", "Blanc", "Verde", "Mar", "Real"]
STATE_FORMS = ["{r}shire", "{r} Province", "North {r}", "South {r}", "{r} Territory", "{r}ia", "Upper {r}",
               "{r} Region"]
FIRST = """James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan
Joseph Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra
Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy
George Melissa Timothy Deborah Ronald Stephanie Jason Rebecca Edward Sharon Jeffrey Laura Ryan Cynthia Jacob
Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen Brenda Larry Pamela Justin Emma Scott Nicole
Brandon Helen Benjamin Samantha Samuel Katherine Gregory Christine Frank Debra Alexander Rachel Raymond Carolyn
Patrick Janet Jack Catherine Dennis Maria Jerry Heather Tyler Diane José Zoë Renée Chloé François Björn Søren
Siobhán Joaquín Inés Dmitri Aoife Leïla Noémie Matías Ngozi Chidi Wei Mei Hiroshi Yūko Priya Arjun Kaveh Élodie
Rhys Niamh Tadhg Oksana Bartholomew Ezekiel Winifred Cornelius""".split()
LAST = """Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson
Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson
Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell
Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales
Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson
Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long
Ross Foster O'Connor O'Neill D'Souza McAllister MacLeod Müller Núñez Åkesson Østergaard Dvořák Lefèvre Santos
Kowalski Nakamura Okafor Adébáyò Haddad Yılmaz Papadopoulos Fitzgerald Vanderbilt Delacroix""".split()
SUFFIXES = ["", "", "", "", "", "", " Jr.", " Sr.", " III"]
TITLE_WORDS = ["Night", "River", "Glass", "Orchard", "Harbour", "Winter", "Summer", "Iron", "Silver", "Crown",
               "Shadow", "Garden", "Storm", "Empire", "Letters", "Bridge", "Station", "Road", "Island", "Mirror",
               "Fire", "Wolves", "Salt", "Dust", "Paper", "Lantern", "Kingdom", "Season", "Stranger", "Heart",
               "Machine", "Echo", "Horizon", "Frontier", "Promise", "Secret", "Voyage", "Tide", "Ashes", "Dawn"]
TITLE_FORMS = ["The {a}", "{a} and {b}", "The {a} of {b}", "{a}, {b}", "A {a} in {b}", "Beyond the {a}",
               "{a}: The {b}", "The Last {a}", "Return to {b}", "{a} (and Other {b}s)", "Under the {a}",
               "The {a}'s {b}", "{p}", "{p}, {q}", "Goodbye, {p}", "Letters from {p}"]
FILM_GENRES = ["Drama", "Comedy", "Thriller", "Action Film", "Romance Film", "Science Fiction", "Horror",
               "Documentary film", "Crime Fiction", "Musical", "Western", "Animation", "Adventure Film",
               "War film", "Mystery", "Biographical film", "Fantasy", "Family", "Coming of age", "Film noir"]
MUSIC_GENRES = ["Rock music", "Pop music", "Jazz", "Hip hop music", "Country", "Folk music", "Electronic music",
                "Soul music", "Heavy metal", "Punk rock", "Classical music", "Rhythm and blues", "Reggae",
                "Indie rock", "Blues"]
BOOK_GENRES = ["Novel", "Science fiction", "Fantasy", "Mystery", "Historical fiction", "Biography", "Poetry",
               "Young-adult fiction", "Non-fiction", "Short story"]
TV_GENRES = ["Sitcom", "Drama", "Reality television", "Animated series", "Police procedural", "Soap opera",
             "Talk show", "Science fiction", "Teen drama", "Game show"]
PROFESSIONS = ["Actor", "Film director", "Screenwriter", "Film Producer", "Singer", "Songwriter", "Musician",
               "Politician", "Lawyer", "Businessperson", "Writer", "Novelist", "Poet", "Journalist",
               "Athlete", "Football player", "Basketball player", "Baseball player", "Coach", "Model",
               "Comedian", "Television presenter", "Entrepreneur", "Engineer", "Physician", "Economist",
               "Diplomat", "Philanthropist", "Record producer", "Composer", "Voice Actor", "Dancer",
               "Teacher", "Professor", "Soldier", "Architect", "Photographer", "Painter", "Chef", "Activist"]
RELIGIONS = ["Christianity", "Catholicism", "Protestantism", "Islam", "Judaism", "Hinduism", "Buddhism",
             "Sikhism", "Atheism", "Eastern Orthodox Church"]
ETHNICITIES = ["Irish American", "Italian American", "African American", "Scottish people", "English people",
               "German American", "Hispanic and Latino Americans", "Jewish people", "Polish American",
               "Mexican American", "French Canadian", "Welsh people", "Asian American", "Norwegian American",
               "Greek American", "Cuban American", "Korean American", "Filipino American", "Dutch American",
               "Swedish American"]
LANGUAGE_NAMES = ["English Language", "Spanish Language", "French", "German Language", "Italian Language",
                  "Portuguese Language", "Mandarin Chinese", "Japanese Language", "Arabic Language", "Russian Language",
                  "Hindi Language", "Dutch Language", "Swedish Language", "Greek Language", "Polish Language",
                  "Korean Language", "Turkish Language", "Swahili Language", "Hebrew Language", "Irish",
                  "Welsh Language", "Catalan language", "Basque Language", "Tagalog language", "Aldorian Language",
                  "Carvanian Language", "Nordhavn Sign Language", "Old Marisco", "Pellonian Creole", "Galdoric"]
LANGUAGE_FAMILIES = ["Indo-European languages", "Germanic languages", "Romance languages", "Afroasiatic languages",
                     "Sino-Tibetan languages", "Niger–Congo languages", "Language isolate", "Creole language"]
WRITING_SYSTEMS = ["Latin alphabet", "Cyrillic script", "Arabic alphabet", "Devanagari", "Hangul", "Kanji",
                   "Greek alphabet", "Hebrew alphabet"]
CURRENCY_WORDS = ["Aldorian crown", "Belmark mark", "Carvanian lira", "Drosmere pound", "Estrelian real", "Galdor",
                  "Hesperian dollar", "Istranan dinar", "Jorvik krone", "Kalderan peso", "Lunarian franc",
                  "Marisco escudo", "Nordhavn krona", "Pellonian złoty", "Euro", "United States Dollar",
                  "Rovenian rouble", "Solvang dollar", "Tarrant shilling", "Valdorian rand"]
GOVERNMENT_FORMS = ["Parliamentary system", "Presidential system", "Constitutional monarchy", "Federal republic",
                    "Unitary state", "Semi-presidential system", "Absolute monarchy", "Republic"]
TIME_ZONES = ["Central European Time", "Eastern Time Zone", "Pacific Time Zone", "Greenwich Mean Time",
              "UTC+03:00", "UTC−05:00", "Japan Standard Time", "Central Time Zone", "Mountain Time Zone",
              "UTC+05:30", "Australian Eastern Time Zone", "UTC+08:00"]
SPORTS = {"Association football": ["Goalkeeper", "Defender (association football)", "Midfielder", "Forward (association football)"],
          "Basketball": ["Point guard", "Shooting guard", "Small forward", "Power forward (basketball)", "Center (basketball)"],
          "American football": ["Quarterback", "Running back", "Wide receiver", "Linebacker", "Cornerback", "Tight end"],
          "Baseball": ["Pitcher", "Catcher", "Shortstop", "Outfielder", "First baseman"],
          "Ice hockey": ["Goaltender", "Defenceman", "Centre (ice hockey)", "Winger (ice hockey)"]}
TEAM_NICKNAMES = ["Lions", "Hawks", "Rovers", "United", "Mariners", "Pioneers", "Wolves", "Comets", "Royals",
                  "Giants", "Knights", "Rangers", "Falcons", "Titans", "Thunder", "Sharks", "Bears", "Storm",
                  "Athletic", "Wanderers", "Dynamo", "City", "Saints", "Vikings"]
COLORS = ["Red", "Blue", "Navy Blue", "Green", "Gold", "White", "Black", "Orange", "Maroon", "Silver", "Purple",
          "Teal", "Crimson", "Yellow"]
DEGREES = ["Bachelor of Arts", "Bachelor of Science", "Master of Arts", "Master of Business Administration",
           "Juris Doctor", "Doctor of Philosophy", "Master of Science", "Doctor of Medicine", "Bachelor of Fine Arts"]
MAJORS = ["Economics", "Political Science", "Law", "English Literature", "History", "Drama", "Music",
          "Computer Science", "Medicine", "Journalism", "Philosophy", "Business Administration", "Mathematics",
          "Film studies", "Psychology", "Architecture"]
JOB_TITLES = ["Chief Executive Officer", "President", "Chairman", "Founder", "Chief Operating Officer",
              "Vice President", "Board member", "Chief Technology Officer", "Managing Director", "Partner"]
INDUSTRIES = ["Film industry", "Music industry", "Publishing", "Software", "Banking", "Retail", "Automotive industry",
              "Telecommunications", "Energy", "Pharmaceutical industry", "Aerospace", "Mass media",
              "Real estate", "Consumer electronics", "Food industry", "Fashion", "Video game industry", "Insurance",
              "Hospitality industry", "Mining"]
COMPANY_FORMS = ["{a} Pictures", "{a} Records", "{a} Holdings, Inc.", "{a} & {b}", "{a} Media Group",
                 "{a} Corporation", "{a} Studios", "{a} Books", "{a} Motors", "{a} Bank", "{a}soft",
                 "{a} Airlines", "{a} Foods, Ltd.", "{a} Entertainment (company)"]
UNIVERSITY_FORMS = ["University of {c}", "{c} State University", "{c} College", "{c} Institute of Technology",
                    "Saint {p} University", "{p} University", "{c} School of Law", "Royal Academy of {c}"]
CAUSES_OF_DEATH = ["Heart attack", "Cancer", "Pneumonia", "Stroke", "Traffic collision", "Natural causes",
                   "Drug overdose", "Lung cancer", "Suicide", "Heart failure", "Alzheimer's disease", "Leukemia"]
OFFICE_FORMS = {"country": ["President of {j}", "Prime Minister of {j}", "Minister of Finance ({j})",
                            "Member of the National Assembly of {j}"],
                "state": ["Governor of {j}", "Lieutenant Governor of {j}", "Senator for {j}"],
                "city": ["Mayor of {j}"]}
GOVERNMENTAL_BODIES = ["Senate", "House of Representatives", "National Assembly", "City council", "Cabinet",
                       "State legislature", "Supreme Court", "Parliament"]
PARTY_FORMS = ["{c} Labour Party", "Democratic Party ({c})", "{c} Conservative Union", "Green Party of {c}",
               "Liberal Democrats ({c})", "People's Party ({c})", "Social Democratic Party of {c}"]
NETWORKS = ["Meridian Broadcasting Company", "Channel Kestrel", "Harbour Television Network", "TV Aldoria 1",
            "Northstar Broadcasting", "Lantern Cable", "Open Sky Channel", "Galdor Public Television",
            "Carvania Uno", "Silverline Streaming"]
RECORD_LABELS = ["Bluewater Records", "Iron Crown Music", "Lantern Sound", "Saltmarsh Recordings", "Nightjar Music",
                 "Echo Hollow Records", "Orchard Lane Records", "Redbridge Records", "Tidewater Music Group",
                 "Anvil & Ash Records", "Moonrise Records", "Velvet Static", "North Pier Records",
                 "Dusthouse Records", "Brightside Music", "Cobalt Label", "Sable Records", "Parlour Records",
                 "Starling Recordings", "Citadel Music"]
INSTRUMENTS = ["Guitar", "Bass guitar", "Drums", "Piano", "Keyboard", "Violin", "Saxophone", "Trumpet", "Vocals",
               "Cello", "Harmonica", "Synthesizer"]
AWARD_FORMS = ["{n} Award for Best Actor", "{n} Award for Best Actress", "{n} Award for Best Director",
               "{n} Award for Best Picture", "{n} Award for Best Original Score", "{n} Prize for Fiction",
               "{n} Award for Album of the Year", "{n} Award for Best New Artist", "{n} Award for Outstanding Drama Series",
               "{n} Medal of Honor", "{n} Award for Best Supporting Actor", "{n} Lifetime Achievement Award"]
AWARD_NAMES = ["Golden Meridian", "Kestrel", "Silver Lantern", "Harbourlight", "Crown Jewel", "Aurora", "Obsidian"]
RATINGS = ["PG-13 (USA)", "R (USA)", "PG (USA)", "G (USA)", "NC-17 (USA)", "12A (UK)", "15 (UK)", "18 (UK)"]
DIETS = ["Vegetarianism", "Veganism", "Pescetarianism", "Raw foodism"]
WEBPAGE_CATEGORIES = ["Official Website", "Topic Webpage", "Fan site", "Social media profile"]
MEDICAL = ["Asthma", "Type 1 diabetes", "Dyslexia", "Bipolar disorder", "Multiple sclerosis", "Depression",
           "Parkinson's disease", "Celiac disease"]
