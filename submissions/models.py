"""Queued writes: what visitors send, waiting for review, and the standing of public checks.

Every row keeps only a keyed hash of the sender's address (``beers.clients.address_hash``).
E-mails and contacts are ``EncryptedTextField`` with a blind index beside them; nothing here
stores them in clear.

Duplicates: the same body (without ``turnstile``, e-mail/contact and consent) from the same
address while the first one still waits for review is refused by a partial unique constraint
on ``(address_hash, body_fingerprint)`` where the row is pending, so two identical requests
arriving together store one row.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from beers.crypto import EncryptedTextField
from beers.models import Beer, Brand, City, Deal, Format, Venue


class ReviewState(models.TextChoices):
    PENDING = "pending", _("aguardando revisão")
    APPROVED = "approved", _("aprovado")
    REJECTED = "rejected", _("rejeitado")
    MERGED = "merged", _("mesclado")
    RESOLVED = "resolved", _("resolvido")


class QueuedWrite(models.Model):
    """Fields every reviewed write shares."""

    address_hash = models.CharField(max_length=64, db_index=True)
    body_fingerprint = models.CharField(max_length=64)
    state = models.CharField(
        _("estado"), max_length=10, choices=ReviewState.choices, default=ReviewState.PENDING
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    decision_note = models.CharField(
        _("motivo / nota da decisão"), max_length=280, blank=True, default=""
    )

    class Meta:
        abstract = True
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["address_hash", "body_fingerprint"],
                condition=Q(state="pending"),
                name="%(app_label)s_%(class)s_pending_once",
            ),
            models.CheckConstraint(
                condition=Q(state__in=ReviewState.values),
                name="%(app_label)s_%(class)s_state_valid",
            ),
        ]


class PriceSubmission(QueuedWrite):
    """A price someone saw (the Submission body, minus verification and private data)."""

    city = models.ForeignKey(City, on_delete=models.PROTECT, related_name="+")
    venue = models.ForeignKey(
        Venue,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text=_("O bar já listado; vazio quando o envio propõe um bar novo."),
    )
    format = models.ForeignKey(Format, on_delete=models.PROTECT, related_name="+")
    payload = models.JSONField(_("envio"), help_text=_("O corpo validado, sem dados pessoais."))
    email = EncryptedTextField(null=True, blank=True)
    email_index = models.CharField(max_length=64, blank=True, default="", db_index=True)
    deal = models.ForeignKey(
        Deal,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text=_("O preço criado (aprovado) ou atualizado (mesclado) por este envio."),
    )

    class Meta(QueuedWrite.Meta):
        verbose_name = _("envio de preço")
        verbose_name_plural = _("envios de preço")

    def __str__(self) -> str:
        # the city's slug and the format's code, not their numbers (the admin's list selects
        # both with the submission)
        return f"#{self.pk} {self.city.slug} {self.format.code} ({self.state})"


class CityRequest(QueuedWrite):
    city = models.CharField(_("cidade"), max_length=80)
    city_key = models.CharField(
        _("cidade (normalizada)"),
        max_length=80,
        blank=True,
        default="",
        db_index=True,
        help_text=_("Sem acentos, minúsculas, espaços simples: agrupa os pedidos."),
    )
    state_name = models.CharField(_("estado (UF)"), max_length=40, blank=True, default="")
    email = EncryptedTextField(null=True, blank=True)
    email_index = models.CharField(max_length=64, blank=True, default="", db_index=True)

    class Meta(QueuedWrite.Meta):
        verbose_name = _("pedido de cidade")
        verbose_name_plural = _("pedidos de cidade")

    def __str__(self) -> str:
        return f"{self.city} ({self.state_name})"


class BarOwnerTopic(models.TextChoices):
    SPONSOR = "sponsor", _("patrocínio")
    PRICES = "prices", _("preços")
    CORRECTION = "correction", _("correção")
    REMOVAL = "removal", _("remoção")
    OTHER = "other", _("outro")


class BarOwnerMessage(QueuedWrite):
    """A message from a bar's owner or manager. Name and contact are deleted after 90 days."""

    city = models.ForeignKey(City, on_delete=models.PROTECT, related_name="+")
    bar = models.CharField(_("bar"), max_length=120)
    venue_slug = models.TextField(blank=True, default="")
    venue = models.ForeignKey(
        Venue, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    topic = models.CharField(max_length=12, choices=BarOwnerTopic.choices)
    message = models.TextField(blank=True, default="")
    name = EncryptedTextField(null=True, blank=True)
    contact = EncryptedTextField(null=True, blank=True)
    contact_index = models.CharField(max_length=64, blank=True, default="", db_index=True)

    class Meta(QueuedWrite.Meta):
        verbose_name = _("mensagem de bar")
        verbose_name_plural = _("mensagens de bares")

    def __str__(self) -> str:
        return f"{self.bar} · {self.topic} ({self.state})"


class PhotoState(models.TextChoices):
    RECEIVED = "received", _("recebido")
    AWAITING_OCR = "awaiting_ocr", _("aguardando leitura")
    DRAFTED = "drafted", _("lido em rascunhos")
    FAILED = "failed", _("falhou")
    EXPIRED = "expired", _("fotos apagadas sem leitura")


PHOTO_STATES_OPEN = (PhotoState.RECEIVED, PhotoState.AWAITING_OCR)


class MenuPhotoUpload(models.Model):
    """Photos of a menu, read in the background into drafts; the photos themselves are
    deleted after reading (and by ``contacts_purge`` after a few days in any case)."""

    city = models.ForeignKey(City, on_delete=models.PROTECT, related_name="+")
    venue = models.ForeignKey(Venue, on_delete=models.CASCADE, related_name="+")
    address_hash = models.CharField(max_length=64, db_index=True)
    body_fingerprint = models.CharField(max_length=64)
    state = models.CharField(max_length=12, choices=PhotoState.choices, default=PhotoState.RECEIVED)
    is_owner = models.BooleanField(null=True, blank=True)
    trusted = models.BooleanField(
        default=False,
        help_text=_(
            "Enviadas com o link do próprio bar (ref válido): preços dentro dos limites são "
            "aprovados na leitura."
        ),
    )
    contact = EncryptedTextField(null=True, blank=True)
    contact_index = models.CharField(max_length=64, blank=True, default="", db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    # Readings begun (submissions.menu_photos.MAX_READS): a photo that brings its reader down
    # is not read again and again.
    read_attempts = models.PositiveSmallIntegerField(default=0, editable=False)

    class Meta:
        verbose_name = _("fotos de cardápio")
        verbose_name_plural = _("fotos de cardápio")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["address_hash", "body_fingerprint"],
                condition=Q(state__in=PHOTO_STATES_OPEN),
                name="menuphoto_open_once",
            ),
            models.CheckConstraint(
                condition=Q(state__in=PhotoState.values), name="menuphoto_state_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.venue_id} ({self.state})"


class MenuPhoto(models.Model):
    """One decoded JPEG, kept only until the upload is read."""

    upload = models.ForeignKey(MenuPhotoUpload, on_delete=models.CASCADE, related_name="photos")
    position = models.PositiveSmallIntegerField()
    jpeg = models.BinaryField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["upload", "position"]
        constraints = [
            models.UniqueConstraint(fields=["upload", "position"], name="menuphoto_position"),
        ]

    def __str__(self) -> str:
        return f"{self.upload_id}/{self.position}"


class MenuDraft(models.Model):
    """One menu line read from a photo that shows a price: what the reader made of it, for the
    automated reviewer (a trusted upload's complete drafts inside the hard bounds are approved
    at once) or a moderator."""

    upload = models.ForeignKey(MenuPhotoUpload, on_delete=models.CASCADE, related_name="drafts")
    venue = models.ForeignKey(Venue, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    text = models.CharField(_("linha lida"), max_length=200)
    beer = models.ForeignKey(
        Beer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    brand = models.ForeignKey(
        Brand, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    format = models.ForeignKey(
        Format, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    price_cents = models.PositiveIntegerField()
    notes = models.CharField(_("observações da leitura"), max_length=200, blank=True, default="")
    state = models.CharField(
        max_length=12, choices=ReviewState.choices, default=ReviewState.PENDING, db_index=True
    )
    deal = models.ForeignKey(
        Deal, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decision_note = models.CharField(max_length=280, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("rascunho de cardápio")
        verbose_name_plural = _("rascunhos de cardápio")
        ordering = ["-created_at", "upload", "position"]
        constraints = [
            models.UniqueConstraint(fields=["upload", "position"], name="menudraft_position"),
            models.CheckConstraint(condition=Q(price_cents__gt=0), name="menudraft_price"),
            models.CheckConstraint(
                condition=Q(
                    state__in=[ReviewState.PENDING, ReviewState.APPROVED, ReviewState.REJECTED]
                ),
                name="menudraft_state_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.text}"


class DealConfirmation(models.Model):
    """'This price is right': once per address, price and city-local day."""

    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="+")
    address_hash = models.CharField(max_length=64)
    day = models.DateField(help_text=_("Data local da cidade do preço."))
    counted = models.BooleanField(
        default=False,
        help_text=_("Contou como checagem (não havia contestações abertas)."),
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("confirmação")
        verbose_name_plural = _("confirmações")
        constraints = [
            models.UniqueConstraint(
                fields=["deal", "address_hash", "day"], name="confirmation_once_a_day"
            ),
        ]
        # the day's writes of an address, when the daily cap's counters are lost (limits.py)
        indexes = [models.Index(fields=["address_hash", "created_at"], name="confirmation_sender")]

    def __str__(self) -> str:
        return f"{self.deal_id} {self.day}"


class DealDispute(models.Model):
    """'This price is wrong': once per address, price and city-local day; waits for review."""

    deal = models.ForeignKey(Deal, on_delete=models.CASCADE, related_name="+")
    address_hash = models.CharField(max_length=64)
    day = models.DateField(help_text=_("Data local da cidade do preço."))
    price_cents = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Quanto custa agora, segundo quem contestou.")
    )
    state = models.CharField(
        max_length=10, choices=ReviewState.choices, default=ReviewState.PENDING
    )
    created_at = models.DateTimeField(default=timezone.now)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("contestação")
        verbose_name_plural = _("contestações")
        constraints = [
            models.UniqueConstraint(
                fields=["deal", "address_hash", "day"], name="dispute_once_a_day"
            ),
            models.CheckConstraint(
                condition=Q(price_cents__isnull=True)
                | Q(price_cents__gt=0, price_cents__lte=1_000_000),
                name="dispute_price_range",
            ),
            models.CheckConstraint(
                condition=Q(state__in=ReviewState.values), name="dispute_state_valid"
            ),
        ]
        indexes = [models.Index(fields=["address_hash", "created_at"], name="dispute_sender")]

    def __str__(self) -> str:
        return f"{self.deal_id} {self.day} ({self.state})"


class ReportReason(models.TextChoices):
    CLOSED = "closed", _("fechou")
    WRONG_VENUE = "wrong_venue", _("bar errado")
    WRONG_BEER = "wrong_beer", _("cerveja errada")
    WRONG_PRICE = "wrong_price", _("preço errado")
    OTHER = "other", _("outro")


class Report(QueuedWrite):
    deal = models.ForeignKey(
        Deal, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    venue = models.ForeignKey(
        Venue, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reason = models.CharField(max_length=12, choices=ReportReason.choices)
    message = models.TextField(blank=True, default="")

    class Meta(QueuedWrite.Meta):
        verbose_name = _("relato de problema")
        verbose_name_plural = _("relatos de problema")

    def __str__(self) -> str:
        return f"{self.reason} ({self.state})"


class DisputedDeal(Deal):
    """The beers price seen as a moderation queue: prices with disputes to decide."""

    class Meta:
        proxy = True
        verbose_name = _("preço contestado")
        verbose_name_plural = _("preços contestados")
