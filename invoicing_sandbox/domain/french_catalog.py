"""Realistic French business data shared by the generator and the mutator (products, services, tags)."""

from __future__ import annotations

import random

from faker import Faker

# (name, unit, price range excl. tax, VAT rate %): the three French rates 20, 10 and 5.5
PRODUCTS = [
    ("Chaise de bureau ergonomique", "pièce", (89, 420), 20),
    ("Bureau assis-debout", "pièce", (290, 890), 20),
    ("Écran 27 pouces", "pièce", (180, 520), 20),
    ("Cartouche d'encre", "pièce", (12, 65), 20),
    ("Ramette papier A4", "carton", (18, 42), 20),
    ("Lampe LED de bureau", "pièce", (25, 110), 20),
    ("Café en grains 1 kg", "kg", (14, 38), 5.5),
    ("Thé bio en vrac", "kg", (22, 60), 5.5),
    ("Panier repas traiteur", "pièce", (9, 25), 10),
    ("Plateau-repas", "pièce", (15, 32), 10),
    ("Livre professionnel", "pièce", (19, 75), 5.5),
    ("Abonnement revue spécialisée", "an", (60, 240), 5.5),
    ("Casque audio sans fil", "pièce", (59, 320), 20),
    ("Clavier mécanique", "pièce", (49, 180), 20),
    ("Plante d'intérieur", "pièce", (15, 90), 10),
    ("Fontaine à eau", "pièce", (150, 600), 20),
]
SERVICES = [
    ("Développement web", "jour", (450, 900), 20),
    ("Conseil en stratégie", "heure", (90, 250), 20),
    ("Formation bureautique", "jour", (600, 1400), 20),
    ("Maintenance informatique", "heure", (55, 120), 20),
    ("Rédaction de contenus", "heure", (45, 110), 20),
    ("Audit de sécurité", "jour", (800, 1600), 20),
    ("Travaux de rénovation", "heure", (35, 80), 10),
    ("Transport de personnes", "trajet", (25, 140), 10),
    ("Hébergement de site", "mois", (9, 79), 20),
    ("Conception graphique", "forfait", (300, 2500), 20),
    ("Traduction technique", "page", (25, 60), 20),
    ("Nettoyage de locaux", "heure", (22, 40), 20),
    ("Accompagnement RH", "heure", (80, 180), 20),
    ("Photographie événementielle", "forfait", (350, 1800), 20),
]
SUPPLIER_TAGS = [
    "fournitures",
    "informatique",
    "loyer",
    "énergie",
    "télécom",
    "sous-traitance",
    "transport",
    "assurance",
    "logiciel",
    "restauration",
    "urgent",
    "récurrent",
]


def vat_number(siren: str) -> str:
    """The French intra-community VAT number of a SIREN (key = (12 + 3 * (siren mod 97)) mod 97)."""
    return f"FR{(12 + 3 * (int(siren) % 97)) % 97:02d}{siren}"


def address(fake: Faker) -> dict:
    """A French postal address."""
    return {
        "street": fake.street_address(),
        "postalCode": fake.postcode(),
        "city": fake.city(),
        "country": "FR",
    }


def customer_body(fake: Faker, rng: random.Random, business: bool) -> dict:
    """A customer input body: a company with SIRET and VAT, or a private person."""
    if business:
        siren = fake.siren().replace(" ", "")
        name = fake.company()
        body = {
            "name": name,
            "siret": siren + f"{rng.randint(10, 99999):05d}",
            "vat": vat_number(siren),
            "email": f"compta@{fake.domain_word()}.fr",
            "phone": fake.phone_number(),
            "address": address(fake),
            "contacts": [{"name": fake.name(), "email": fake.email(), "phone": fake.phone_number()}],
        }
        if rng.random() < 0.2:
            body["delivery"] = address(fake)
        return body
    body = {"name": fake.name(), "mobile": fake.phone_number(), "address": address(fake)}
    if rng.random() < 0.85:
        body["email"] = fake.email()
    return body


def item_body(rng: random.Random, service: bool, number: int) -> dict:
    """An item input body from the catalogue (prices vary per item)."""
    name, unit, (low, high), vat = rng.choice(SERVICES if service else PRODUCTS)
    price = round(rng.uniform(low, high), rng.choice((0, 2)))
    return {
        "name": f"{name} {number}" if number else name,
        "unit": unit,
        "price": price,
        "vat": vat,
        "type": "service" if service else "product",
        "description": f"{name} ({unit})",
        "buyingPrice": round(price * rng.uniform(0.4, 0.8), 2) if not service else None,
    }


def supplier_body(fake: Faker, rng: random.Random) -> dict:
    """A supplier input body with a unique-looking SIRET as legal identifier and a few tags."""
    return {
        "name": fake.company(),
        "legalIdentifier": fake.siret().replace(" ", ""),
        "email": f"facturation@{fake.domain_word()}.fr",
        "phone": fake.phone_number(),
        "address": address(fake),
        "tags": rng.sample(SUPPLIER_TAGS, rng.randint(0, 3)),
    }
