import re
import warnings

import numpy as np
import pytest

from torch_geometric_stream.datasets import DatasetFormatError, DatasetNotFoundError, load_dataset


def test_shuttle_train_then_test(tmp_path, write):
    write(tmp_path / "Shuttle" / "shuttle.trn",
          "50 21 77 0 28 0 27 48 22 2\n55 0 92 0 0 26 36 92 56 4\n")
    write(tmp_path / "Shuttle" / "shuttle.tst", "37 0 79 0 10 0 42 69 28 1\n")
    ds = load_dataset("Shuttle", tmp_path)
    np.testing.assert_array_equal(ds.x, [[50, 21, 77, 0, 28, 0, 27, 48, 22],
                                         [55, 0, 92, 0, 0, 26, 36, 92, 56],
                                         [37, 0, 79, 0, 10, 0, 42, 69, 28]])
    assert ds.y.tolist() == [1, 2, 0] and ds.class_names == ["Rad Flow", "Fpv Close", "High"]
    assert ds.x.dtype == np.float32 and "9 attributes" in ds.notes


def test_shuttle_rejects_fractional_class(tmp_path):
    (tmp_path / "Shuttle").mkdir()
    (tmp_path / "Shuttle" / "shuttle.trn").write_text("1 2 3 4 5 6 7 8 9 1.5\n")
    (tmp_path / "Shuttle" / "shuttle.tst").write_text("1 2 3 4 5 6 7 8 9 1\n")
    with pytest.raises(DatasetFormatError, match="class labels must be integers"):
        load_dataset("shuttle", tmp_path)


def test_sdd(tmp_path, write):
    rows = [[i + 0.5 * j for j in range(48)] + [c] for i, c in enumerate([11, 1, 5])]
    write(tmp_path / "SDD" / "Sensorless_drive_diagnosis.txt",
          "\n".join(" ".join(repr(v) for v in row) for row in rows) + "\n")
    ds = load_dataset("sdd", tmp_path)
    assert ds.x.shape == (3, 48) and ds.x[2, 47] == pytest.approx(2 + 0.5 * 47)
    assert ds.y.tolist() == [2, 0, 1] and ds.class_names == ["1", "5", "11"]


GSAD_ROW = "{label} " + " ".join(f"{i}:{i / 10:.6f}" for i in range(1, 129))


def write_gsad(folder, write, batches, first_token="{label}"):
    for b in batches:
        line = GSAD_ROW.replace("{label}", first_token).format(label=b % 6 + 1)
        write(folder / f"batch{b}.dat", line + "\n" + line + "\n")


def test_gsad_all_batches(tmp_path, write):
    write_gsad(tmp_path / "GSAD", write, range(1, 11))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_dataset("GSAD", tmp_path, strict=True)
    assert ds.x.shape == (20, 128) and ds.num_classes == 6
    np.testing.assert_allclose(ds.x[0, :3], [0.1, 0.2, 0.3], rtol=1e-6)
    assert ds.y[:4].tolist() == [1, 1, 2, 2] and ds.class_names[0] == "Ethanol"


def test_gsad_blank_lines_are_skipped(tmp_path, write):
    write_gsad(tmp_path / "GSAD", write, range(2, 11))
    line = GSAD_ROW.format(label=3)
    write(tmp_path / "GSAD" / "batch1.dat", f"\n{line}\n\n  \n{line}\n\n")
    ds = load_dataset("GSAD", tmp_path, strict=True)
    assert ds.x.shape == (20, 128) and ds.y[:2].tolist() == [2, 2]


def test_gsad_uci_variant_with_concentration(tmp_path):
    write_gsad(tmp_path / "GSAD", lambda p, s: p.parent.mkdir(exist_ok=True) or p.write_text(s),
               range(1, 11), first_token="{label};10.000000")
    ds = load_dataset("GSAD", tmp_path)
    assert ds.x.shape == (20, 128) and ds.y[0] == 1


def test_gsad_missing_batches_warn_and_strict_raises(tmp_path, write):
    write_gsad(tmp_path / "GSAD", write, [1, 2, 3, 4, 5, 6, 8, 9])
    with pytest.warns(UserWarning, match="batch7.dat, batch10.dat"):
        ds = load_dataset("GSAD", tmp_path)
    assert ds.num_samples == 16 and "batch7.dat" in ds.notes
    # before: "streaming only the others", then nothing streamed
    with pytest.raises(DatasetNotFoundError,
                       match="(?s)strict: nothing is streamed\\): batch7.dat, batch10.dat"
                             ".*gas\\+sensor"):
        load_dataset("GSAD", tmp_path, strict=True)


@pytest.mark.filterwarnings("ignore:GSAD batches missing")
@pytest.mark.parametrize("line, match", [("1 1:2.0 129:3.0", "feature index 129 outside 1..128"),
                                         ("x 1:2.0", "expected '<class>"),
                                         ("1 1:abc", "expected '<class>"),
                                         ("1 1:2.0 2:nan",
                                          "feature 2 holds the non-finite value 'nan'")])
def test_gsad_malformed(tmp_path, line, match):
    (tmp_path / "GSAD").mkdir()
    (tmp_path / "GSAD" / "batch1.dat").write_text(line + "\n")
    with pytest.raises(DatasetFormatError, match="batch1.dat line 1: " + match):
        load_dataset("GSAD", tmp_path)


def har_lines(values):
    return "\n".join(" " + " ".join(f"{v:.7e}" for v in row) for row in values) + "\n"


@pytest.mark.parametrize("layout", ["UCI HAR Dataset/{split}", "{split}", "."])
def test_har_layouts(tmp_path, write, layout):
    folder = tmp_path / "HAR"
    rng = np.random.default_rng(0)
    train, test = rng.uniform(-1, 1, (3, 561)), rng.uniform(-1, 1, (2, 561))
    for split, x, y in (("train", train, [5, 5, 1]), ("test", test, [6, 2])):
        base = folder / layout.format(split=split)
        write(base / f"X_{split}.txt", har_lines(x))
        write(base / f"y_{split}.txt", "\n".join(map(str, y)) + "\n")
    ds = load_dataset("HAR", tmp_path)
    np.testing.assert_allclose(ds.x, np.concatenate([train, test]), rtol=1e-6)
    assert ds.y.tolist() == [2, 2, 0, 3, 1]
    assert ds.class_names == ["WALKING", "WALKING_UPSTAIRS", "STANDING", "LAYING"]
    assert ds.feature_names is None


def write_har_with_names(tmp_path):
    """Two rows per split with the feature and activity names; the HAR folder."""
    base = tmp_path / "HAR" / "UCI HAR Dataset"
    for split in ("train", "test"):
        (base / split).mkdir(parents=True)
        (base / split / f"X_{split}.txt").write_text(har_lines(np.ones((2, 561))))
        (base / split / f"y_{split}.txt").write_text("1\n2\n")
    (base / "features.txt").write_text("".join(f"{i} feat-{i}\n" for i in range(1, 562)))
    (base / "activity_labels.txt").write_text("1 WALK\n2 UP\n")
    return base


def test_har_names_from_metadata_and_row_mismatch(tmp_path):
    base = write_har_with_names(tmp_path)
    ds = load_dataset("HAR", tmp_path)
    assert ds.class_names == ["WALK", "UP"] and ds.feature_names[560] == "feat-561"
    (base / "test" / "y_test.txt").write_text("1\n")
    with pytest.raises(DatasetFormatError, match="X_test.txt has 2 rows but y_test.txt has 1"):
        load_dataset("HAR", tmp_path)


@pytest.mark.parametrize("name, text", [("features.txt", "1 f\n2\n"),
                                        ("activity_labels.txt", "1 WALK\nup UP\n")])
def test_har_names_not_of_id_and_name_lines_are_refused(tmp_path, name, text):
    base = write_har_with_names(tmp_path)
    (base / name).write_text(text)  # a line of no name, or of no number
    with pytest.raises(DatasetFormatError, match=f"^{name}: expected '<id> <name>' lines\n"):
        load_dataset("HAR", tmp_path)


OD_FILES = ("datatraining.txt", "datatest.txt", "datatest2.txt")
OD_HEADER = '"date","Temperature","Humidity","Light","CO2","HumidityRatio","Occupancy"\n'


def test_od_three_files_in_order(tmp_path, write):
    rows = {"datatraining.txt":
            ['"1","2015-02-04 17:51:00",23.18,27.272,426,721.25,0.00479298817650529,1'],
            "datatest.txt":
            ['"140","2015-02-02 14:19:00",23.7,26.272,585.2,749.2,0.00476416302416414,1',
             '"141","2015-02-02 14:19:59",23.718,26.29,578.4,760.4,0.00477266099212519,0'],
            "datatest2.txt": ['"1","2015-02-11 14:48:00",21.76,31.1333333333333,437.333333333333,'
                              '1029.66666666667,0.00502101089021385,1']}
    for name, lines in rows.items():
        write(tmp_path / "OD" / name, OD_HEADER + "\n".join(lines) + "\n")
    ds = load_dataset("OD", tmp_path)
    assert ds.feature_names == ["Temperature", "Humidity", "Light", "CO2", "HumidityRatio"]
    np.testing.assert_allclose(ds.x[0], [23.18, 27.272, 426, 721.25, 0.00479298817650529],
                               rtol=1e-6)
    np.testing.assert_allclose(ds.x[3, :2], [21.76, 31.1333333333333], rtol=1e-6)
    assert ds.y.tolist() == [1, 1, 0, 1] and ds.class_names == ["not occupied", "occupied"]


def test_od_a_fractional_occupancy_is_no_class(tmp_path):
    (tmp_path / "OD").mkdir()
    for name in OD_FILES:
        (tmp_path / "OD" / name).write_text(
            OD_HEADER + '"1","2015-02-04 17:51:00",23.18,27.272,426,721.25,0.0047,0.5\n')
    with pytest.raises(DatasetFormatError, match="^datatraining.txt: class labels must be "
                                                 "integers\n"):
        load_dataset("OD", tmp_path)


SHOPPER_HEADER = ("Administrative,Administrative_Duration,Informational,Informational_Duration,"
                  "ProductRelated,ProductRelated_Duration,BounceRates,ExitRates,PageValues,"
                  "SpecialDay,Month,OperatingSystems,Browser,Region,TrafficType,VisitorType,"
                  "Weekend,Revenue\n")


def test_shopper(tmp_path, write):
    write(tmp_path / "Shopper" / "online_shoppers_intention.csv", SHOPPER_HEADER +
          "0,0,0,0,1,0,0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,FALSE,FALSE\n"
          "2,53,0,0,19,608.5,0,0.0105,12.5,0.4,Nov,2,2,3,4,New_Visitor,TRUE,TRUE")
    ds = load_dataset("shopper", tmp_path)
    assert ds.x.shape == (2, 15) and ds.feature_names[-1] == "Weekend"
    np.testing.assert_allclose(ds.x[1], [2, 53, 0, 0, 19, 608.5, 0, 0.0105, 12.5, 0.4,
                                         2, 2, 3, 4, 1], rtol=1e-6)
    assert ds.y.tolist() == [0, 1] and ds.class_names == ["FALSE", "TRUE"]


def test_shopper_non_numeric_value(tmp_path):
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + "0,0,0,0,1,0,0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,MAYBE,FALSE\n")
    with pytest.raises(DatasetFormatError,
                       match="column 'Weekend' holds the non-numeric value 'MAYBE'"):
        load_dataset("shopper", tmp_path)


SHOPPER_ROW = "0,0,0,0,1,0,0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,FALSE,{revenue}\n"


@pytest.mark.parametrize("revenue", ["maybe", "1", ""])
def test_shopper_revenue_other_than_true_or_false_is_no_class(tmp_path, revenue):
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + SHOPPER_ROW.format(revenue="FALSE") + SHOPPER_ROW.format(revenue=revenue))
    with pytest.raises(DatasetFormatError, match=f"data row 2: column 'Revenue' must be TRUE or "
                                                 f"FALSE, got '{revenue}'"):
        load_dataset("shopper", tmp_path)


def test_shopper_has_both_classes_whatever_a_file_holds(tmp_path):
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + SHOPPER_ROW.format(revenue="true"))
    ds = load_dataset("shopper", tmp_path)
    assert ds.y.tolist() == [1] and ds.num_classes == 2 and ds.class_names == ["FALSE", "TRUE"]


def test_shopper_non_finite_value(tmp_path):
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + "0,0,0,0,1,0,0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,FALSE,FALSE\n"
        "0,0,0,0,1,inf,0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,FALSE,FALSE\n")
    with pytest.raises(DatasetFormatError, match="data row 2: column 'ProductRelated_Duration' "
                                                 "holds the non-finite value 'inf'"):
        load_dataset("shopper", tmp_path)


# A number in a data file is ASCII decimal notation (datasets.numbers), not all that
# float() reads: before, '1_000' was read as 1000 and '\u0663' (Arabic-Indic three) as 3.
NOT_NUMBERS = ["1_000", "\u0663", "\uff11\uff12"]


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_shopper_a_feature_is_a_number_in_ascii_decimal_notation_only(tmp_path, value):
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + SHOPPER_ROW.format(revenue="FALSE")
        + f"0,0,0,0,1,{value},0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,FALSE,TRUE\n",
        encoding="utf-8")
    with pytest.raises(DatasetFormatError,
                       match=f"^online_shoppers_intention.csv data row 2: column "
                             f"'ProductRelated_Duration' holds the non-numeric value '{value}'"):
        load_dataset("shopper", tmp_path)


def test_shopper_infinity_is_no_feature_value(tmp_path):
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + "0,0,0,0,1,-Infinity,0.2,0.2,0,0,Feb,1,1,1,1,Returning_Visitor,"
                         "FALSE,FALSE\n")
    with pytest.raises(DatasetFormatError, match="data row 1: column 'ProductRelated_Duration' "
                                                 "holds the non-finite value '-Infinity'"):
        load_dataset("shopper", tmp_path)


def test_shopper_numbers_are_read_exactly(tmp_path):
    # every notation of the rule; a CSV field's surrounding spaces are no part of it
    (tmp_path / "Shopper").mkdir()
    (tmp_path / "Shopper" / "online_shoppers_intention.csv").write_text(
        SHOPPER_HEADER + "1e-3,-2,.5,5.,+3, 12 ,0.0105,1E2,0,0,Feb,1,1,1,1,Returning_Visitor,"
                         "true,FALSE\n")
    ds = load_dataset("shopper", tmp_path)
    np.testing.assert_array_equal(ds.x[0], np.array([1e-3, -2, 0.5, 5, 3, 12, 0.0105, 100, 0, 0,
                                                     1, 1, 1, 1, 1], dtype=np.float32))


def test_od_a_label_is_a_number_in_ascii_decimal_notation_only(tmp_path):
    # before: '\u0661' (Arabic-Indic one) was the class 'occupied'
    (tmp_path / "OD").mkdir()
    for name in ("datatraining.txt", "datatest.txt", "datatest2.txt"):
        (tmp_path / "OD" / name).write_text(
            OD_HEADER + '"1","2015-02-04 17:51:00",23.18,27.272,426,721.25,0.0047,1\n'
                        '"2","2015-02-04 17:51:59",23.15,27.2675,429.5,714,0.0047,\u0661\n',
            encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="^datatraining.txt data row 2: column "
                                                 "'Occupancy' holds the non-numeric value "
                                                 "'\u0661'"):
        load_dataset("OD", tmp_path)


@pytest.mark.filterwarnings("ignore:GSAD batches missing")
@pytest.mark.parametrize("line, match", [
    *[(f"1 1:2.0 2:{value}", f"feature 2 holds the non-numeric value '{value}'")
      for value in NOT_NUMBERS],
    ("1 1:2.0 2:infinity", "feature 2 holds the non-finite value 'infinity'"),
    ("\u0661 1:2.0", "the class '\u0661' is not a number"),
    ("1_0 1:2.0", "the class '1_0' is not a number"),
    ("1 1:2.0 0_2:3.0", "feature index '0_2' is not a number")])
def test_gsad_a_field_is_a_number_in_ascii_decimal_notation_only(tmp_path, line, match):
    (tmp_path / "GSAD").mkdir()
    (tmp_path / "GSAD" / "batch1.dat").write_text("1 1:2.0\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match="^batch1.dat line 2: " + match + "\n"):
        load_dataset("GSAD", tmp_path)


@pytest.mark.filterwarnings("ignore:GSAD batches missing")
@pytest.mark.parametrize("line", ["2\u00a01:2.5 3:4.0", "2;conc_\u00e9 1:2.5 3:4.0"])
def test_gsad_a_line_of_numbers_beside_other_characters_is_read(tmp_path, line):
    """Characters beyond ASCII or an underscore send a line to the number check,
    which passes it where each field is a number: a no-break space between fields,
    text after the class's ';' (where the UCI variant has the concentration)."""
    (tmp_path / "GSAD").mkdir()
    (tmp_path / "GSAD" / "batch1.dat").write_text("1 1:2.0\n" + line + "\n", encoding="utf-8")
    ds = load_dataset("GSAD", tmp_path)
    assert ds.x[1, :4].tolist() == [2.5, 0.0, 4.0, 0.0] and ds.y.tolist() == [0, 1]


@pytest.mark.filterwarnings("ignore:GSAD batches missing")
@pytest.mark.parametrize("line, index", [("1 1:2.0 2:3.0 1:4.0", "1"),
                                         ("1 7:2.0 007:3.0", "007"),
                                         ("1 5:2.0 +5:3.0", "+5")])
def test_gsad_a_repeated_feature_index_is_refused(tmp_path, line, index):
    # the same feature twice (by its number, whatever the spelling) is an error, not
    # the last value silently kept
    (tmp_path / "GSAD").mkdir()
    (tmp_path / "GSAD" / "batch1.dat").write_text("1 1:2.0\n" + line + "\n")
    with pytest.raises(DatasetFormatError,
                       match=f"^batch1.dat line 2: feature index {re.escape(index)} given "
                             r"twice \(each feature at most once\)\n"):
        load_dataset("GSAD", tmp_path)


@pytest.mark.filterwarnings("ignore:GSAD batches missing")
def test_gsad_numbers_are_read_exactly(tmp_path):
    (tmp_path / "GSAD").mkdir()
    (tmp_path / "GSAD" / "batch1.dat").write_text(
        "+2 1:1e-3 2:-2 3:.5 4:5. 5:+3 6:15596.162100 128:-1.2E+2\n")
    ds = load_dataset("GSAD", tmp_path)
    expected = np.zeros(128, dtype=np.float32)
    expected[[0, 1, 2, 3, 4, 5, 127]] = [1e-3, -2, 0.5, 5, 3, 15596.1621, -120]
    np.testing.assert_array_equal(ds.x[0], expected)
    assert ds.class_names == ["Ethylene"]


@pytest.mark.parametrize("value", [*NOT_NUMBERS, "x"])
def test_shuttle_a_field_that_is_no_number_is_named_by_line_and_column(tmp_path, value):
    # before: NumPy's "at row 1, column 9", the row counted from 0, the column from 1
    (tmp_path / "Shuttle").mkdir()
    (tmp_path / "Shuttle" / "shuttle.trn").write_text(
        f"1 2 3 4 5 6 7 8 9 1\n\n1 2 3 4 5 6 7 8 {value} 1\n", encoding="utf-8")
    (tmp_path / "Shuttle" / "shuttle.tst").write_text("1 2 3 4 5 6 7 8 9 1\n")
    with pytest.raises(DatasetFormatError, match=f"^shuttle.trn: not a numeric table: line 3, "
                                                 f"column 9 holds the non-numeric value "
                                                 f"'{value}'\\n"):
        load_dataset("shuttle", tmp_path)


def test_a_numeric_table_names_the_field_that_is_no_number_past_a_comment(tmp_path):
    # NumPy reads a comment line ('#' to the line's end); before, the error named
    # it: "line 1, column 1 holds the non-numeric value '#'"
    (tmp_path / "Shuttle").mkdir()
    (tmp_path / "Shuttle" / "shuttle.trn").write_text(
        "# class in the last column\n1 2 3 4 5 6 7 8 9 1 # one\n1 2 3 4 5 6 7 8 x 1\n",
        encoding="utf-8")
    (tmp_path / "Shuttle" / "shuttle.tst").write_text("1 2 3 4 5 6 7 8 9 1\n")
    with pytest.raises(DatasetFormatError, match="^shuttle.trn: not a numeric table: line 3, "
                                                 "column 9 holds the non-numeric value 'x'"):
        load_dataset("shuttle", tmp_path)
