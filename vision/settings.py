"""Every setting of the reader, in one frozen tree (`ReaderSettings`), one part per stage.

Two kinds of number live here:
- hand-set: written below where it is set, with its reason in a few words;
- fitted: written by a script from data it names, into the settings file saved beside the weights
  (`models/reader_settings.json`, or `<model>.reader.json` beside another model), and read from
  there (`fitted`). That file says, for each fitted number, the script and the data that fitted it.

The reader is built from one tree (`vision.read.Reader(settings=...)`); an experiment changes a
part with `dataclasses.replace`, never a module constant.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path

from calibration.template import FLAT_PX_PER_MM
from scoring.rules import CARS_IN_BOX

SETTINGS_NAME = "reader_settings.json"  # beside the packaged weights (models/)


def settings_path(path: str | Path | None = None) -> Path:
    """A settings file: `path`, or the packaged one."""
    return Path(path) if path else Path(str(resources.files("models"))) / SETTINGS_NAME


def fitted_entries(path: str | Path | None = None) -> dict:
    """{dotted name: {value, by, data}} of the fitted settings in a settings file (the packaged one by
    default): each value with the command and the data that fitted it."""
    return json.loads(settings_path(path).read_text(encoding="utf-8"))["fitted"]


@lru_cache(maxsize=4)
def fitted_values(path: str | None = None) -> dict:
    """{dotted name: value} of the fitted settings in a settings file (the packaged one by default)."""
    return {k: v["value"] for k, v in fitted_entries(path).items()}


def fitted(name: str):
    """A field whose default is the packaged settings file's fitted value `name`."""
    def default():
        value = fitted_values()[name]
        return tuple(value) if isinstance(value, list) else value
    return field(default_factory=default)


@dataclass(frozen=True)
class LightSettings:
    """Evening out the light on the board's paper, and finding glare it leaves (`vision.light`)."""

    paper_level: float = 190.0  # the paper's grey in every channel after evening out (a mid-light grey, room both ways)
    cells: tuple[int, int] = (10, 15)  # the light map's cells over the board, ~55 mm: a lamp's slope, not the drawings
    percentile: float = 80.0  # of the paper pixels in a cell: the paper, above the map's thin lines and lettering
    gain_range: tuple[float, float] = (0.6, 1.4)  # of the board-wide value: a cell further off is drawings, not light
    paper_grow_mm: float = 4.0  # cars overhang their spaces and cast shadows: kept out of the paper
    register: bool = True  # move the template's spaces onto the board's own (a corner a few mm off moves them)
    register_px_per_mm: float = 1.0  # the registration's working scale
    register_max_shift_mm: float = 8.0  # a sane correction moves no space further
    register_iterations: int = 40
    register_eps: float = 1e-4
    # Glare: a space is under glare where the paper around it stays brighter than this once the
    # light was evened out: paper_level + 15, where evened-out paper's median stays below ~197
    # around every space of 95 % of the doubt fit's rendered photos (median 184).
    glare_paper_level: float = 205.0
    glare_cells: tuple[int, int] = (20, 30)  # finer than `cells`: glare is a spot, not a slope
    # Glare as wide as the light map's cells is evened out like a lamp's slope, yet it is added
    # light: it brings the print toward the paper's grey where a lamp's slope leaves the contrast.
    # A space is under glare too where the empty spaces within `print_glare_reach_mm` (at least
    # `print_glare_spaces` of them, printed at least `print_glare_contrast` from the paper) have
    # lost this share of their print's contrast (median; 0: not looked for).
    print_glare_loss: float = fitted("light.print_glare_loss")
    print_glare_reach_mm: float = 60.0  # about a light-map cell: the spot the evening-out takes for light
    print_glare_spaces: int = 4
    print_glare_contrast: float = 30.0  # Lab units: white print is too near the paper to tell
    print_glare_colours: bool = True  # the colours read again with it (cars there mixed with white)
    # A flash's glare is a veil of added light over the cars as over the print: on a photo whose
    # flash fired, the veil the print shows (its lost contrast, in points `veil_step_mm` apart) is
    # taken off and the board read again (`vision.light.take_off_veil`). At most `veil_max` of the
    # light is taken for veil: beyond it the contrast left is noise stretched (measured flat from
    # 0.45 to 0.75 on the validation renders).
    flash_veil: bool = True
    veil_max: float = 0.6
    # Less lost contrast than this is what 95 % of the print shows on photos without glare (0.12 and
    # 0.11 on the renders r2026 and sloppy8282): no veil is taken off there.
    veil_floor: float = 0.12
    veil_step_mm: float = 15.0  # a quarter of `print_glare_reach_mm`: the spot's edge, not each space


@dataclass(frozen=True)
class SampleSettings:
    """Where each space is measured (`vision.spaces.sample_spaces`)."""

    # The part of a space (fraction of its length, of its width) whose colour is measured: cars sit
    # a little off their space, and its printed outline is not its colour.
    inner: tuple[float, float] = (0.7, 0.35)
    inner_grid: tuple[int, int] = (17, 7)  # points over that part where a car's colour is measured
    # A car's colour is measured at 2 k + 1 places across its space (0: its middle), since hands lay
    # cars a few millimetres off their spaces' middles and the car's side turned from the light is dark.
    car_across_steps: int = 2


@dataclass(frozen=True)
class ColourSettings:
    """The colour evidence (`vision.evidence.colour.ColourModel`). Colours are OpenCV 8-bit Lab
    after light normalisation (paper (190, 190, 190) BGR is L 199, a 128, b 128)."""

    sigma_empty: tuple[float, float, float] = (14.0, 6.0, 7.0)  # per-space reference, L a b
    sigma_empty_class: tuple[float, float, float] = (20.0, 8.0, 9.0)  # only the printed colour known
    sigma_car: tuple[float, float, float] = (22.0, 10.0, 12.0)
    prior_weight: float = 6.0  # pseudo-count keeping adapted means near their start
    rounds: int = 3
    track_temperature: float = 2.0  # a track's spaces share light and cars: their sum is tempered (as in deciding)
    floor: float = -12.0  # lowest log-likelihood of one space (a car half off its space, a glare)
    min_cover: float = 0.4  # a car may cover this share of its space and still count
    cover_penalty: float = 2.0  # log-likelihood cost of a car covering none of its space (linear)
    well_covered: float = 0.8  # spaces a car covers more of show the car's colour (they adapt it)
    # Glossy print catches the light: an empty space may look like its print mixed with white, up
    # to this share, at this log-likelihood cost per unit share (a car too, under glare).
    max_glare: float = 0.35
    glare_penalty: float = 1.0
    learns_from_net: bool = True  # the net's first look joins in saying which spaces show print
    learns_from_check: bool = True  # ... and so does the car-or-print check (made for that question)
    # The first round's say of which spaces show print and which cars from that other evidence
    # alone: the photo's own colours are learnt first from what the nets call print and cars, not
    # from the generic colours, which another copy's print or a phone's tone mapping can bring
    # nearer the generic car than the generic print (docs/ablation.md).
    first_from_others: bool = True
    # Generic colours: cars are saturated moulded plastic (never measured from a photo); print is
    # the board's inks. The photo adapts both (`rounds`).
    car_lab: tuple = (("red", (106.0, 165.0, 158.0)), ("blue", (83.0, 130.0, 93.0)),
                      ("green", (85.0, 114.0, 133.0)), ("yellow", (188.0, 121.0, 190.0)),
                      ("black", (28.0, 128.0, 130.0)))
    printed_lab: tuple = (("red", (95.0, 165.0, 163.0)), ("blue", (100.0, 133.0, 84.0)),
                          ("green", (133.0, 108.0, 176.0)), ("yellow", (202.0, 122.0, 193.0)),
                          ("black", (50.0, 128.0, 127.0)), ("white", (192.0, 128.0, 129.0)),
                          ("orange", (130.0, 154.0, 178.0)), ("pink", (124.0, 158.0, 126.0)),
                          ("gray", (160.0, 129.0, 127.0)))
    white_lab: tuple[float, float, float] = (255.0, 128.0, 128.0)  # the light itself, as glare


@dataclass(frozen=True)
class NetSettings:
    """The space classifier's evidence (`vision.evidence.net`); its patch geometry comes with
    its weights (`models/space_classifier.json`)."""

    floor: float = 0.02  # probabilities below this are clipped: a net is never that sure off its data
    # Its colour answer counts this much (0: only whether a car is there; 1: as surely as it says).
    # As it says: it learnt the cars' colours in other homes' worlds (print runs, lights, phones),
    # which the colour evidence's fixed colours do not know.
    colour_trust: float = 1.0
    threads: int = 2  # onnxruntime's threads: this project's machines have two cores
    # The car-or-print check is asked about every photo at one sharpness, half the flattened
    # board's: a patch from a photo that shows the board finer (pixels per board mm) is softened to
    # it. Fine texture (cloth weave, paper grain, a phone's sharpening) differs between homes; a
    # car's block and shadow do not. None: the patches as cut.
    check_px_per_mm: float | None = FLAT_PX_PER_MM / 2


@dataclass(frozen=True)
class ChangeSettings:
    """A user's calibration: each space against its own empty look (`vision.evidence.change`)."""

    changed_lab: float = 20.0  # Lab distance from the empty look past which a pixel changed
    mid: float = 7.0  # median distance where car and empty are equally likely
    scale: float = 2.5  # distance per unit of log-odds
    clip: float = 4.0  # log-odds held to +-this: one space never decides a track
    inner: tuple[float, float] = (0.85, 0.7)  # the part of a space compared (more than the colour's: pixels, not a mean)
    grid: tuple[int, int] = (15, 7)
    shift_px: int = 2  # what the alignment leaves: each space compared at the best shift within this
    # A car covering part of its space is measured by its changed pixels alone (a fully covered
    # space is read whole: its changed pixels include the car's shadow).
    isolated_share: tuple[float, float] = (0.3, 0.8)
    align_px_per_mm: float = 0.5  # the alignment to the calibration's board matches map drawings at this scale
    align_iterations: int = 60
    align_eps: float = 1e-5
    align_max_shift_mm: float = 8.0


@dataclass(frozen=True)
class CalibrationGate:
    """When a user's calibration is used on a photo (`vision.evidence.change.check_calibration`):
    a calibration's empty view helps only on photos in its light and from near its angle, so each
    photo is read without it first, and the view is used where its change evidence agrees with
    that reading on the spaces it is sure are empty."""

    max_false_change: float = fitted("calibration.max_false_change")
    # Fewer sure-empty spaces than this (a crowded board) cannot show that the view matches (one
    # space is then over 5 % of them): the photo is read without the calibration.
    min_judged_spaces: int = 20


@dataclass(frozen=True)
class FuseSettings:
    """Weights of the evidence sources in the fused per-space log-likelihood (only their ratios
    matter to which hypothesis wins; the decision's temperature scales all)."""

    colour: float = 1.0
    net: float = 1.0
    change: float = 1.0
    occupancy: float = 1.0  # the car-or-print check (models/occupancy.py); 0: read without it
    car_colour: float = 1.0  # the car-colour net (models/car_colour.py); 0: read without it
    # The car-colour net is asked only about spaces the other evidence gives at least this chance
    # of a car: of whether a car stands there it says nothing, and a space read empty by the rest
    # keeps its reading whatever colour it names (it only lowers the colours, never empty).
    car_colour_from: float = 0.01


@dataclass(frozen=True)
class RefineSettings:
    """Second judgements of the net, in order (`vision.refine`)."""

    second_look: bool = True  # the half-turned patch where the reading may turn on the net
    lanes_alone: bool = True  # a lane beside a claimed lane of its double, that lane shown bare
    min_print_samples: int = 3  # spaces of a print colour read empty needed to paint that print from the photo


@dataclass(frozen=True)
class DecideSettings:
    """Who owns each track, under the rules (`vision.decide`)."""

    temperature: float = 2.0  # divides summed space log-likelihoods (a track's spaces share light and cars)
    max_trains: int = CARS_IN_BOX  # the box's cars: real boards show the 3 spares
    unseen_player_prior: bool = True  # see vision.decide.priors
    spill: float = 2.0  # tempered log-likelihood cost of an empty lane showing its neighbour's cars
    # The log prior odds against a player of a finished game having placed only n cars, n = 0, 1, ...
    # (0 past the end): the game model's shares (benchmarks/fit_few_cars.py). Empty: off.
    few_cars_prior: tuple[float, ...] = fitted("decide.few_cars_prior")


@dataclass(frozen=True)
class DoubtSettings:
    """How sure each track is (`vision.decide.doubt`): P(wrong) = sigmoid(bias[kind] - slope[kind]
    * m), m the evidence margin per space, per contest kind (own print, two colours, car or not,
    which lane)."""

    bias: tuple[float, ...] = fitted("doubt.bias")  # per contest kind (vision.decide.doubt.DOUBT_KINDS)
    slope: tuple[float, ...] = fitted("doubt.slope")
    # Per-space margins past these say nothing more: below, the rules chose against the photo;
    # above, the photo is plain (and a few such tracks must not steer the fit).
    margin_range: tuple[float, float] = (-1.0, 4.0)
    below: float = fitted("doubt.below")  # doubtful under this confidence
    # A double whose likeliest other reading is its lanes swapped is calibrated as its own contest
    # (WHICH_LANE); off: as the contest of the hypotheses themselves.
    which_lane: bool = True
    glare_share: float = 0.5  # a track with this share of its spaces under glare is under glare
    # ... and wrong at least sigmoid(glare_bias - glare_slope * m), m its margin per space
    # (vision.decide.doubt.glare_chance)
    glare_bias: float = fitted("doubt.glare_bias")
    glare_slope: float = fitted("doubt.glare_slope")
    # A player read on more than this share of the tracks printed in their colour: each of those
    # claims is doubtful (print of a copy read as cars). Players of the game model hold more in 3 of
    # 1,000 (`vision.synth.positions`, 3,000 positions), the development games' in none.
    own_print_most: float = 0.5
    # A photo with this many doubtful tracks (a fifth of the board) is hard to read as a whole: its
    # other tracks are doubtful too under `hard_below` (vision.decide.doubt.hard_photo_marks), fitted
    # on renders (the flash photos' on renders under a flash). The reading's warning says the photo
    # is hard to read at this count on any photo.
    hard_photo: int = 20
    hard_below: float = fitted("doubt.hard_below")
    named: int = 6  # doubtful tracks named in the reading's warning (the rest counted)


@dataclass(frozen=True)
class SeveralSettings:
    """How several photos of one board are weighed and checked against each other (`vision.several`)."""

    # Pixels of photo per board millimetre at which a photo shows a space's detail in full (the
    # board is read flattened at 2 px/mm); a coarser photo counts less, in proportion.
    sharp_px_per_mm: float = 2.0
    min_resolution_weight: float = 0.25  # a coarse photo still says something
    # A space seen from the side shows the cars' sides and leans them over the next lane: weighed
    # by the cosine of the angle from straight above, to this power.
    tilt_power: float = 2.0
    glare_weight: float = 0.25  # a space under glare (the light normalisation leaves it, or the print shows it)
    min_outline_weight: float = 0.1  # a photo whose outline is unsure (confidence 0) still counts a little
    # Each photo's evidence on a track also weighed by how surely that photo reads the track alone
    # (its doubt's confidence): a photo that doubts a track gives way to one that is sure of it.
    by_certainty: bool = True
    # Two photos of one position disagree, one at least sure, only where one of them misreads (at
    # most a couple of tracks a photo); a moved double already makes two. More than this is
    # another position.
    max_disagreeing: int = 4


@dataclass(frozen=True)
class ReaderSettings:
    """The whole reader's settings, one part per stage in the order a photo meets them."""

    px_per_mm: float = FLAT_PX_PER_MM  # the flattened board's scale (its home is the template)
    light: LightSettings = field(default_factory=LightSettings)
    sample: SampleSettings = field(default_factory=SampleSettings)
    colour: ColourSettings = field(default_factory=ColourSettings)
    net: NetSettings = field(default_factory=NetSettings)
    change: ChangeSettings = field(default_factory=ChangeSettings)
    fuse: FuseSettings = field(default_factory=FuseSettings)
    # A photo whose flash fired weighs its sources by their own weights, fitted on renders under a
    # flash (`benchmarks/fit_fuse.py`): the flash washes out the hues the classifier and the colours
    # lean on, less the shape the car-or-print check and the car-colour net learnt with hues turned.
    fuse_flash: FuseSettings = field(default_factory=lambda: fitted_part(FuseSettings(), "fuse_flash"))
    refine: RefineSettings = field(default_factory=RefineSettings)
    decide: DecideSettings = field(default_factory=DecideSettings)
    doubt: DoubtSettings = field(default_factory=DoubtSettings)
    # A photo whose flash fired (its EXIF says so) is doubted by its own standard, fitted on renders
    # under a flash: the flash's veil makes the evidence's margins mean less.
    doubt_flash: DoubtSettings = field(default_factory=lambda: fitted_part(DoubtSettings(), "doubt_flash"))
    calibration: CalibrationGate = field(default_factory=CalibrationGate)
    several: SeveralSettings = field(default_factory=SeveralSettings)


def fitted_part(part, name: str):
    """`part` (a settings dataclass) with the packaged settings file's fitted values `name`.* set:
    a second fitted copy of one kind of settings."""
    return with_values(part, {k.split(".", 1)[1]: v for k, v in fitted_values().items() if k.startswith(name + ".")})


def load_settings(model_path: str | Path | None = None) -> ReaderSettings:
    """The reader's settings for the net at `model_path`: the fitted numbers of the settings file
    beside it where there is one, else the packaged ones (the fitted numbers belong to a net: the
    doubt is calibrated on its answers)."""
    beside = Path(model_path).with_name(SETTINGS_NAME) if model_path else None
    settings = ReaderSettings()
    if beside is None or not beside.is_file():
        return settings
    return with_values(settings, fitted_values(str(beside)))


def with_values(settings, values: dict):
    """A copy of a settings tree with `values` ({dotted name: value}) set."""
    top: dict = {}
    for name, value in values.items():
        head, _, rest = name.partition(".")
        top.setdefault(head, {})
        if rest:
            top[head][rest] = value
        else:
            top[head] = value
    changes = {}
    for f in fields(settings):
        if f.name not in top:
            continue
        v = top[f.name]
        current = getattr(settings, f.name)
        if isinstance(v, dict):
            changes[f.name] = with_values(current, v)
        else:
            changes[f.name] = tuple(v) if isinstance(v, list) else v
    return replace(settings, **changes)


def write_fitted(values: dict, by: str, data: str, path: str | Path | None = None) -> Path:
    """Write fitted settings ({dotted name: value}) into a settings file (the packaged one by
    default), each with the command (`by`) and the data that fitted it."""
    p = settings_path(path)
    doc = json.loads(p.read_text(encoding="utf-8"))
    for name, value in values.items():
        doc["fitted"][name] = {"value": list(value) if isinstance(value, tuple) else value, "by": by, "data": data}
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    # A fitted list on one line, as a person writes it: [-0.49, 1.53, -0.84].
    text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]",
                  text)
    p.write_text(text + "\n", encoding="utf-8")
    fitted_values.cache_clear()
    return p
